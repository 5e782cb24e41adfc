"""The source analyzer: Python and build files -> table, gate and build findings.

Pipeline: walk the target -> stat against the cache -> read + byte pre-filter -> parse and
extract (both cores when there are enough files) -> evaluate the rules for every arch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from capgap.findings import Finding, Skipped
from capgap.scan.analyzers import AnalyzerResult, ScanOptions
from capgap.scan.builds import is_build_file
from capgap.scan.cache import ScanCache, digest
from capgap.scan.grepfilter import SKIP_DIRS
from capgap.scan.records import FileFacts

if TYPE_CHECKING:
    from capgap.targets import Target

ANALYZER_ID = "source"
_POOL_MIN_BYTES = 2 << 20  # below this much to read, starting workers costs more than it saves
_CHUNKS_PER_WORKER = 8  # small enough that no worker is left alone with a big last chunk
_GREP_MIN_FILES = 200  # below this, reading the files costs less than starting grep
NO_TOKENS = "no-capability-tokens"  # the cache's entry for files grep found nothing in


def _relevant(path: Path) -> bool:
    return path.suffix == ".py" or is_build_file(path.name)


def _work(item: tuple[str, str], hashed: bool = True) -> tuple[str, str, FileFacts | None, str]:
    """Read and extract one file: (rel, digest, facts, unreadable-reason); no digest unless `hashed`."""
    from capgap.scan.fileparse import facts_for_bytes

    rel, full = item
    try:
        with open(full, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return rel, "", None, f"unreadable: {exc.strerror or exc}"
    try:
        facts = facts_for_bytes(rel, data, rel.endswith(".py"))
    except RecursionError:
        facts = FileFacts(rel, "", skipped="too deeply nested to analyse")
    return rel, digest(data) if hashed else "", facts, ""


def _work_chunk(
    items: list[tuple[str, str]], hashed: bool = True
) -> list[tuple[str, str, FileFacts | None, str]]:
    from capgap.scan.nogc import gc_paused

    with gc_paused():
        return [_work(i, hashed) for i in items]


def _walk_root(root: str, prefix: str, out: list[tuple[str, str]], links: set[str]) -> None:
    """Relevant files under `root` by os.scandir (no Path objects; directory links not followed)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if entry.is_dir(follow_symlinks=False):
            if name not in SKIP_DIRS:
                _walk_root(entry.path, f"{prefix}{name}/", out, links)
        elif name.endswith(".py") or is_build_file(name):
            out.append((prefix + name, entry.path))
            if entry.is_symlink():
                links.add(prefix + name)


def _walk(target: Target, links: set[str] | None = None) -> list[tuple[str, str]]:
    """Relevant files as (relative path, path); `links` collects those that are symbolic links."""
    out: list[tuple[str, str]] = []
    if target.files is None:
        _walk_root(str(target.root), "", out, links if links is not None else set())
        return out
    for path in target.files:
        if _relevant(path) and path.is_file():
            try:
                rel = path.relative_to(target.root).as_posix()
            except ValueError:
                rel = path.as_posix()
            out.append((rel, str(path)))
    return out


def _stat_all(
    target: Target, links: set[str]
) -> tuple[dict[str, os.stat_result], dict[str, str], list[Skipped]]:
    stats: dict[str, os.stat_result] = {}
    paths: dict[str, str] = {}
    skipped: list[Skipped] = []
    for rel, path in _walk(target, links):
        try:
            stats[rel] = os.stat(path)
            paths[rel] = path
        except OSError as exc:  # a dangling link or a loop of links
            skipped.append(Skipped(rel, f"unreadable: {exc.strerror or exc}"))
    return stats, paths, skipped


def collect(
    cache: ScanCache,
    stats: dict[str, os.stat_result],
    paths: dict[str, str],
    options: ScanOptions,
    grep_found: set[str] | None = None,
) -> tuple[list[FileFacts], list[Skipped]]:
    """Facts of every relevant file (from the cache by content, else parsed), and skipped files."""
    from capgap import output

    facts: list[FileFacts] = []
    skipped: list[Skipped] = []
    todo: list[tuple[str, str]] = []
    for rel, st in stats.items():
        hit, cached = cache.lookup(rel, st)
        if hit:
            if cached is not None:
                facts.append(cached)
        else:
            todo.append((rel, paths[rel]))
    todo = _grep_filtered(todo, cache, stats, options, grep_found)
    with output.progress(len(todo), "capgap scan") as bar:
        sizes = {rel: stats[rel].st_size for rel, _ in todo}
        for rel, dig, got, unreadable in _run(todo, options, bar, sizes, hashed=cache.path is not None):
            if unreadable:
                skipped.append(Skipped(rel, unreadable))
                continue
            cache.store(rel, stats[rel], dig, got)
            if got is not None:
                facts.append(got)
    skipped += [Skipped(f.path, f.skipped) for f in facts if f.skipped]
    facts = sorted((f for f in facts if not f.skipped), key=lambda f: f.path)
    return facts, skipped


def _grep_filtered(
    todo: list[tuple[str, str]],
    cache: ScanCache,
    stats: dict[str, os.stat_result],
    options: ScanOptions,
    found: set[str] | None,
) -> list[tuple[str, str]]:
    """`todo` less the Python files grep found no token in (they can hold no facts).

    `found`: relative paths from a grep started at launch (grepfilter.prefetch), else grep is
    asked now about the files to read, when there are enough of them to be worth it.
    """
    if found is None:
        if len(todo) < _GREP_MIN_FILES:
            return todo
        from capgap.scan import grepfilter

        python = [path for rel, path in todo if rel.endswith(".py")]
        by_path = grepfilter.candidates(python, options.jobs or (os.cpu_count() or 1))
        if by_path is None:
            return todo
        found = {rel for rel, path in todo if path in by_path}
    kept = []
    for rel, path in todo:
        if rel.endswith(".py") and rel not in found:
            cache.store(rel, stats[rel], NO_TOKENS, None)
        else:
            kept.append((rel, path))
    return kept


def _chunks(todo: list[tuple[str, str]], sizes: dict[str, int], jobs: int) -> list[list[tuple[str, str]]]:
    """Largest files first, in chunks of about equal bytes: the workers finish together."""
    order = sorted(todo, key=lambda item: -sizes.get(item[0], 0))
    target = max(1, sum(sizes.get(rel, 0) for rel, _ in todo) // (jobs * _CHUNKS_PER_WORKER))
    chunks: list[list[tuple[str, str]]] = [[]]
    filled = 0
    for item in order:
        if chunks[-1] and filled >= target:
            chunks.append([])
            filled = 0
        chunks[-1].append(item)
        filled += sizes.get(item[0], 0)
    return chunks


def _run(
    todo: list[tuple[str, str]], options: ScanOptions, bar: object, sizes: dict[str, int], hashed: bool = True
) -> Iterator[tuple[str, str, FileFacts | None, str]]:
    jobs = options.jobs or (os.cpu_count() or 1)
    if jobs > 1 and sum(sizes.values()) >= _POOL_MIN_BYTES:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from capgap.scan import fileparse  # noqa: F401 - imported before the fork: workers inherit it

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        chunks = _chunks(todo, sizes, jobs)
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method)) as pool:
            done = pool.map(_work_chunk, chunks, [hashed] * len(chunks))
            for chunk, results in zip(chunks, done, strict=False):
                yield from results
                bar.advance(len(chunk))  # type: ignore[attr-defined]
        return
    for item in todo:
        yield _work(item, hashed)
        bar.advance()  # type: ignore[attr-defined]


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.scan.nogc import gc_paused

    with gc_paused():
        return _analyze(target, options)


def _analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.scan import grepfilter, rules

    cache = ScanCache.open(target.root, options.use_cache)
    links: set[str] = set()
    stats, paths, unreadable = _stat_all(target, links)
    key = ",".join(a.cc + a.suffix for a in options.archs)
    if cache.unchanged(stats) and key in cache.results and not unreadable:
        grepfilter.discard(str(target.root))
        findings, skipped = cache.results[key]  # nothing changed: the last answer stands
        return AnalyzerResult(findings=list(findings), skipped=list(skipped), files=len(stats))
    found = grepfilter.prefetched(str(target.root)) if target.files is None else None
    if found is not None:
        found |= links  # grep -r reads no file links: those are read here
    files, skipped = collect(cache, stats, paths, options, found)
    skipped = sorted(skipped + unreadable, key=lambda s: s.path)
    reg = rules.Registry(files)
    findings: list[Finding] = []
    findings += rules.table_findings(files, options.archs, reg)
    findings += rules.gate_findings(files, options.archs, reg)
    findings += rules.build_findings(files, options.archs)
    findings.sort(key=lambda f: (f.path, f.line, f.rule, f.arch))
    cache.save(set(stats), {key: (findings, skipped)})
    return AnalyzerResult(findings=findings, skipped=skipped, files=len(stats) + len(unreadable))
