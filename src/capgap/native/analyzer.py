"""The native analyzer: CUDA/C++ sources -> preprocessor-gate findings per target arch.

Pipeline: walk the target for native sources -> read each and keep those the byte prefilter
passes (an arch macro in it) -> read their directives, groups and defines (both cores when the
bytes are worth it) -> one macro table over all of them -> judge each arch-dependent group.
Vendored libraries (cutlass, cccl, ...) are read for their definitions; their own gates are
judged only with --all.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from capgap.findings import Finding, Skipped
from capgap.native import host
from capgap.native.judge import where
from capgap.native.reader import MAX_BYTES, NATIVE_SUFFIXES
from capgap.native.records import NativeFacts
from capgap.reading.cache import code_stamp
from capgap.scan.analyzers import AnalyzerResult, ScanOptions

if TYPE_CHECKING:
    from capgap.reading.forked import Ahead
    from capgap.targets import Target

ANALYZER_ID = "native"
_GREP = ("grep", "-lEi", "--no-messages", "-D", "skip", "-e")
_POOL_MIN_BYTES = 8 << 20  # below this, one process reads faster than starting another
_CHUNKS_PER_JOB = 8


def native_files(target: Target) -> Iterator[tuple[str, str]]:
    """(relative path, path) of the target's native sources."""
    from capgap.targets import files_ending

    return files_ending(target, NATIVE_SUFFIXES)


def host_candidates(items: list[tuple[str, str]]) -> set[str]:
    """The sources grep finds an arch-named variable compared with a number in (host dispatch is
    parsed only there); grep reads at C speed what a Python regex would take seconds over."""
    import subprocess

    by_path = {path: rel for rel, path in items}
    found: set[str] = set()
    paths = list(by_path)
    for i in range(0, len(paths), 2000):
        try:
            done = subprocess.run(
                [*_GREP, host.GREP_PATTERN, "--", *paths[i : i + 2000]],
                capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return {rel for rel, _ in items}  # no grep: every file is tested in Python
        found.update(by_path[p] for p in done.stdout.splitlines() if p in by_path)
    return found


def read_one(
    rel: str, path: str, vendored: bool = False, dispatch: bool = False
) -> tuple[NativeFacts | None, str]:
    """(facts or None, the reason it was skipped or "")."""
    from capgap.boundedread import read_prefix
    from capgap.native import reader

    try:
        data, size = read_prefix(path, MAX_BYTES)
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if size > MAX_BYTES:
        return None, f"larger than {MAX_BYTES >> 20} MB: not read"
    try:
        facts = reader.read(rel, data, vendored or where(rel)["where"] != "vendored")
    except RecursionError:
        return None, "too deeply nested to analyse"
    if dispatch and size <= host.MAX_BYTES and host.wanted(data):
        decisions, helpers = host.read_all(data)
        if decisions or helpers:
            facts = facts or NativeFacts(rel)
            facts.host, facts.helpers = decisions, helpers
    if facts is not None:
        facts.source = path
    return facts, ""


def _read_chunk(
    items: list[tuple[str, str]], vendored: bool, dispatch: frozenset[str] = frozenset()
) -> list[tuple[str, NativeFacts | None, str]]:
    from capgap.reading.nogc import gc_paused

    with gc_paused():
        return [(rel, *read_one(rel, path, vendored, rel in dispatch)) for rel, path in items]


def read_all(
    items: list[tuple[str, str]], jobs: int, vendored: bool = False, dispatch: frozenset[str] = frozenset()
) -> tuple[list[NativeFacts], list[Skipped]]:
    sizes = {}
    for rel, path in items:
        try:
            sizes[rel] = os.stat(path).st_size
        except OSError:
            sizes[rel] = 0
    total = sum(sizes.values())
    if jobs > 1 and total >= _POOL_MIN_BYTES:
        results = _pooled(items, sizes, jobs, total, vendored, dispatch)
    else:
        results = _read_chunk(items, vendored, dispatch)
    facts = sorted((f for _, f, _ in results if f is not None), key=lambda f: f.path)
    skipped = sorted((Skipped(rel, why) for rel, _, why in results if why), key=lambda s: s.path)
    return facts, skipped


def _pooled(
    items: list[tuple[str, str]],
    sizes: dict[str, int],
    jobs: int,
    total: int,
    vendored: bool,
    dispatch: frozenset[str],
) -> list[tuple[str, NativeFacts | None, str]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from capgap.native import reader  # noqa: F401 - loaded before the fork: the workers inherit it

    order = sorted(items, key=lambda item: -sizes[item[0]])
    target = max(1, total // (jobs * _CHUNKS_PER_JOB))
    chunks: list[list[tuple[str, str]]] = [[]]
    filled = 0
    for item in order:
        chunks[-1].append(item)
        filled += sizes[item[0]]
        if filled >= target:
            chunks.append([])
            filled = 0
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    out: list[tuple[str, NativeFacts | None, str]] = []
    with ProcessPoolExecutor(jobs - 1, mp_context=multiprocessing.get_context(method)) as pool:
        # this process reads every jobs-th chunk itself: what it reads is never pickled
        futures = [
            pool.submit(_read_chunk, c, vendored, dispatch) for i, c in enumerate(chunks) if c and i % jobs
        ]
        for i, c in enumerate(chunks):
            if c and not i % jobs:
                out.extend(_read_chunk(c, vendored, dispatch))
        for fut in futures:
            out.extend(fut.result())
    return out


def start_ahead(target: Target, options: ScanOptions) -> Ahead[AnalyzerResult] | None:
    """The analysis started now in a child process, beside the source analyzer, when its sources
    are worth a core (as many bytes as would start the reading pool) and there is one to spare.
    The child reads in one process: the source analyzer's two take the cores."""
    from capgap.reading import forked, workers

    if workers.default_jobs(options.jobs) < 2 or not forked.can_fork():
        return None
    total = 0
    for _, path in native_files(target):
        try:
            total += os.stat(path).st_size
        except OSError:
            continue
        if total >= _POOL_MIN_BYTES:
            break
    else:
        return None
    one = dataclasses.replace(options, jobs=1)
    return forked.Ahead(lambda: analyze(target, one))


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.native import hostjudge, judge
    from capgap.native.cache import NativeCache
    from capgap.native.helpers import HelperTable
    from capgap.reading import workers
    from capgap.reading.nogc import gc_paused

    items = list(native_files(target))
    if not items:
        return AnalyzerResult()
    with gc_paused():
        cache = NativeCache.open(target.root, options.use_cache, options.vendored)
        stats: dict[str, os.stat_result] = {}
        gone: list[Skipped] = []
        for rel, path in items:
            try:
                stats[rel] = os.stat(path)
            except OSError as exc:  # a dangling link or a loop of links
                gone.append(Skipped(rel, f"unreadable: {exc.strerror or exc}"))
        # the findings of this capgap: an upgraded or edited one judges an unchanged tree again
        key = ",".join(a.cc + a.suffix for a in options.archs) + "@" + code_stamp()
        hits = {rel: cache.lookup(rel, st) for rel, st in stats.items()}
        unchanged = (
            cache.path is not None and set(stats) == set(cache.files) and all(h for h, _ in hits.values())
        )
        if unchanged and key in cache.results:  # nothing changed: the last answer stands
            findings, skipped = cache.results[key]
            return AnalyzerResult(findings=list(findings), skipped=list(skipped), files=len(items))
        paths = dict(items)
        facts = [f for rel, (hit, f) in hits.items() if hit and f is not None]
        for f in facts:
            f.source = paths[f.path]
        todo = [(rel, paths[rel]) for rel, (hit, _) in hits.items() if not hit]
        todo_own = [(rel, p) for rel, p in todo if options.vendored or where(rel)["where"] != "vendored"]
        dispatch = frozenset(host_candidates(todo_own)) if todo_own else frozenset()
        read, skipped = read_all(todo, workers.default_jobs(options.jobs), options.vendored, dispatch)
        facts = sorted(facts + read, key=lambda f: f.path)
        skipped = sorted(skipped + gone, key=lambda s: s.path)
        findings: list[Finding] = judge.findings(facts, options.archs, options.vendored)
        table = HelperTable((f.path, f.helpers) for f in facts if f.helpers)
        for f in facts:
            if f.host:
                findings += hostjudge.findings(f.path, f.host, options.archs, where(f.path), table)
    findings.sort(key=lambda f: (f.path, f.line, f.rule, f.arch))
    if cache.path is not None:
        by_rel = {f.path: f for f in facts}
        unreadable = {s.path for s in skipped}
        entries = {
            rel: (st.st_size, st.st_mtime_ns, by_rel.get(rel))
            for rel, st in stats.items()
            if rel not in unreadable
        }
        same = set(entries) == set(cache.files) and all(hits[rel][0] for rel in entries)
        cache.save(entries, {**(cache.results if same else {}), key: (findings, skipped)})
    return AnalyzerResult(findings=findings, skipped=skipped, files=len(items))
