"""The source analyzer: Python and build files -> table, gate and build findings.

Pipeline: walk the target -> stat against the cache -> read + byte pre-filter -> parse and
extract (both cores when there are enough files) -> evaluate the rules for every arch.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from capgap.findings import Finding, Skipped
from capgap.judging.builds import is_build_file
from capgap.judging.records import FileFacts
from capgap.judging.rules import RULES as RULE_MODULES
from capgap.paths import cache_dir
from capgap.reading import workers
from capgap.reading.cache import ScanCache, code_stamp
from capgap.reading.grepfilter import Stream
from capgap.scan.analyzers import AnalyzerResult, ScanOptions

if TYPE_CHECKING:
    from pathlib import Path

    from capgap.targets import Target

ANALYZER_ID = "source"
RULES = tuple(RULE_MODULES)
_GREP_MIN_FILES = 200  # below this, reading the files costs less than starting grep
NO_TOKENS = "no-capability-tokens"  # the cache's entry for files grep found nothing in


def _relevant(name: str) -> bool:
    return name.endswith(".py") or is_build_file(name)


def _walk(target: Target, links: set[str] | None = None) -> list[tuple[str, str]]:
    """Relevant files as (relative path, path); `links` collects those that are symbolic links."""
    out: list[tuple[str, str]] = []
    if target.files is None:
        for rel, path, name, is_link, in_tool_dir in target.tree:
            if in_tool_dir or not _relevant(name):
                continue
            out.append((rel, path))
            if is_link and links is not None:
                links.add(rel)
        return out
    for file in target.files:  # a dist's file that is a FIFO or a device is read (and refused) too
        if _relevant(file.name) and _not_a_directory(file):
            try:
                rel = file.relative_to(target.root).as_posix()
            except ValueError:
                rel = file.as_posix()
            out.append((rel, str(file)))
    return out


def _not_a_directory(path: Path) -> bool:
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:  # gone, or a dangling link: as before, not listed
        return False


def _stat_all(
    target: Target, links: set[str], python_later: bool = False
) -> tuple[dict[str, os.stat_result], dict[str, str], list[Skipped]]:
    """Stats and paths of the relevant files, and the links among them that dangle or loop.

    `python_later` (no cache to key, grep names the Python files as it reads them): Python files
    that are not links are listed but not stat'ed here; `collect` stats the few grep names when
    it names them (most of an engine's files are never read, and their stats cost ~30 ms).
    """
    stats: dict[str, os.stat_result] = {}
    paths: dict[str, str] = {}
    skipped: list[Skipped] = []
    for rel, path in _walk(target, links):
        if python_later and rel.endswith(".py") and rel not in links:
            paths[rel] = path
            continue
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
    stream: Stream | None = None,
    links: frozenset[str] = frozenset(),
) -> tuple[list[FileFacts], list[Skipped]]:
    """Facts of every relevant file (from the cache by content, else parsed), and skipped files.

    `stream`: a grep started at launch (grepfilter.prefetch) naming the Python files that hold
    any token: they go to the workers as it names them. Without one, grep is asked now about the
    files to read (when there are enough to be worth it), or every file is read.
    """
    from capgap import output

    facts: list[FileFacts] = []
    skipped: list[Skipped] = []
    todo: list[tuple[str, str]] = []
    for rel, path in paths.items():
        st = stats.get(rel)  # None: not stat'ed (_stat_all's python_later), so not cached either
        hit, cached = cache.lookup(rel, st) if st is not None else (False, None)
        if hit:
            if cached is not None:
                facts.append(cached)
        else:
            todo.append((rel, path))
    sizes = {rel: stats[rel].st_size for rel, _ in todo if rel in stats}
    jobs = workers.default_jobs(options.jobs)
    # a stream goes to worker processes once enough bytes have come (workers.run decides)
    pooled = jobs > 1 and (stream is not None or sum(sizes.values()) >= workers.POOL_MIN_BYTES)
    with output.progress(len(todo), "capgap scan") as bar:

        def skip(rel: str) -> None:  # grep found no token: no facts, nothing to read
            if rel in stats:
                cache.store(rel, stats[rel], NO_TOKENS, None)
            bar.advance()  # type: ignore[attr-defined]

        if stream is not None:
            items: Iterable[tuple[str, str]] = _streamed(todo, stream, links, skip, sizes)
        else:
            items = _grep_filtered(todo, skip, jobs)
        for batch in workers.run(items, sizes, jobs, pooled, cache.path is not None, stream is None):
            for rel, dig, got, unreadable in batch:
                if unreadable:
                    skipped.append(Skipped(rel, unreadable))
                    continue
                if rel in stats:
                    cache.store(rel, stats[rel], dig, got)
                if got is not None:
                    facts.append(got)
            bar.advance(len(batch))  # type: ignore[attr-defined]
    skipped += [Skipped(f.path, f.skipped) for f in facts if f.skipped]
    facts = sorted((f for f in facts if not f.skipped), key=lambda f: f.path)
    return facts, skipped


def _streamed(
    todo: list[tuple[str, str]],
    stream: Stream,
    links: frozenset[str],
    skip: Callable[[str], None],
    sizes: dict[str, int],
) -> Iterator[tuple[str, str]]:
    """Build files and file links (grep -r reads no links) first, then what grep names; if grep
    failed, every Python file it did not name too. A file not stat'ed yet is, as it goes out:
    `sizes` cuts the workers' bites."""
    python = {rel: path for rel, path in todo if rel.endswith(".py") and rel not in links}
    yield from ((rel, path) for rel, path in todo if rel not in python)
    named: set[str] = set()
    for rel in stream:
        if rel in python and rel not in named:
            named.add(rel)
            yield _sized(rel, python[rel], sizes)
    for rel, path in python.items():
        if rel not in named:
            if stream.ok:
                skip(rel)
            else:
                yield _sized(rel, path, sizes)


def _sized(rel: str, path: str, sizes: dict[str, int]) -> tuple[str, str]:
    if rel not in sizes:
        try:
            sizes[rel] = os.stat(path).st_size
        except OSError:  # gone since the walk: reading it says so
            sizes[rel] = 0
    return rel, path


def _grep_filtered(
    todo: list[tuple[str, str]], skip: Callable[[str], None], jobs: int
) -> list[tuple[str, str]]:
    """`todo` less the Python files grep finds no token in, when there are enough to ask grep."""
    if len(todo) < _GREP_MIN_FILES:
        return todo
    from capgap.reading import grepfilter

    found = grepfilter.candidates([path for rel, path in todo if rel.endswith(".py")], jobs)
    if found is None:
        return todo
    kept = []
    for rel, path in todo:
        if rel.endswith(".py") and path not in found:
            skip(rel)
        else:
            kept.append((rel, path))
    return kept


def _native_files(target: Target) -> Iterator[tuple[str, str]]:
    """(relative path, path) of the target's `.cu` / `.cuh` files: what JIT modules compile."""
    from capgap.reading.native import NATIVE_SUFFIXES
    from capgap.targets import files_ending

    return files_ending(target, NATIVE_SUFFIXES)


def _compiled_files(target: Target) -> list[tuple[str, str]]:
    """(relative path, path) of the target's shared libraries: compiled Python modules
    (`_deepselect_C.abi3.so`) and the libraries that register torch ops."""
    from capgap.targets import files_ending

    return list(files_ending(target, (".so",)))


def _stamp(files: list[tuple[str, str]]) -> str:
    """Size and time of each file, for the cache key: a reinstalled library is read again."""
    parts = []
    for rel, path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return "|" + hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16] if parts else ""


def _gates(facts: FileFacts) -> int:
    return len(facts.decisions)


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.reading.nogc import gc_paused

    with gc_paused():
        return _analyze(target, options)


def _unshared(f: FileFacts) -> FileFacts:
    """The facts with lists of needs of their own (the cached object stays as extracted)."""
    from dataclasses import replace

    builds = [replace(b, needs=list(b.needs), needs_from=list(b.needs_from)) for b in f.builds]
    return replace(f, needs=list(f.needs), needs_from=list(f.needs_from), builds=builds)


def _module_reader(paths: dict[str, str]) -> Callable[[str], tuple[str, str] | None]:
    """Module name -> (relative path, text) of the tree's Python file of that module, read when asked."""
    from capgap.reading.mentions import text_of

    by_module = {
        rel.removesuffix(".py").removesuffix("/__init__").replace("/", "."): rel
        for rel in paths
        if rel.endswith(".py")
    }

    def read(module: str) -> tuple[str, str] | None:
        rel = by_module.get(module)
        text = text_of(paths[rel]) if rel is not None else None
        return (rel, text) if rel is not None and text is not None else None

    return read


def _analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.binaries.kernels import kernel_index, registered_ops
    from capgap.binaries.specific import bound_library
    from capgap.judging import decidedfirst, ownmodule, rules, uncalled, unreached, unread
    from capgap.judging.extensions import Extensions
    from capgap.judging.opkernels import OpKernels
    from capgap.judging.resolved import Resolver
    from capgap.lifetime import keep_until_exit
    from capgap.reading import forked, grepfilter, mentions, native
    from capgap.scan.dependencies import Dependencies

    if target.files is None:  # a directory: grep reads it while this process walks it
        grepfilter.prefetch(str(target.root))
    cache = ScanCache.open(target.root, options.use_cache)
    links: set[str] = set()
    streams = grepfilter.started(str(target.root)) if target.files is None else False
    stats, paths, unreadable = _stat_all(target, links, python_later=streams and cache.path is None)
    compiled = _compiled_files(target)
    # the releases it pins, read where a path calls into them (a target downloaded or given as a
    # wheel may download them too; a directory reads only what capgap has or the environment holds)
    tops = frozenset(rel.partition("/")[0].removesuffix(".py") for rel in paths)
    deps = Dependencies(target, fetch=target.kind in {"requirement", "wheel"}, tops=tops)
    # findings of this capgap, and of these compiled modules (what a path imports is built for)
    key = ",".join(a.cc + a.suffix for a in options.archs) + "@" + code_stamp() + _stamp(compiled)
    key += "|" + deps.stamp()
    if cache.unchanged(stats) and key in cache.results and not unreadable:
        grepfilter.discard(str(target.root))
        findings, skipped = cache.results[key]  # nothing changed: the last answer stands
        return AnalyzerResult(findings=list(findings), skipped=list(skipped), files=len(paths))
    stream = grepfilter.prefetched(str(target.root)) if streams else None
    files, skipped = collect(cache, stats, paths, options, stream, frozenset(links))
    skipped = sorted(skipped + unreadable, key=lambda s: s.path)
    by_name = native.index(_native_files(target))
    # the native passes add to each module's needs: on copies, or the cache would keep what they
    # added and pass it on further on every warm run (`via a, via b`: results drifting from a cold scan)
    files = [_unshared(f) for f in files]
    native.add_needs(files, by_name)
    native.add_build_needs(files, by_name)
    extensions = Extensions(compiled, bound_library)
    index = partial(kernel_index, cache_root=cache_dir() if options.use_cache else None)
    op_kernels = OpKernels(compiled, registered_ops, index)
    sources = [rel for hits in by_name.values() for rel, _ in hits]
    reg = rules.Registry(files, sources, extensions, op_kernels, deps.facts)
    findings: list[Finding] = []
    findings += rules.table_findings(files, options.archs, reg)
    jobs = workers.default_jobs(options.jobs)
    findings += forked.in_two(lambda part: rules.gate_findings(part, options.archs, reg), files, _gates, jobs)
    findings += rules.registry_findings(files, options.archs, reg)
    findings += rules.class_bound_findings(files, options.archs)
    findings += rules.build_findings(files, options.archs)
    naming = partial(mentions.files_naming, paths)  # the tree's Python files that name a word
    # what lies in a package the target never imports costs it nothing (judging.unreached)
    findings = unreached.demote(
        findings,
        files,
        reg,
        options.archs,
        naming,
    )
    # a gate whose path also asks a value the tree's resolver never gives the target (judging.decidedfirst)
    findings = decidedfirst.demote(findings, options.archs, Resolver(_module_reader(paths), reg.helper_for))
    # a feature the target's family has in a module of its own (judging.ownmodule)
    findings = ownmodule.demote(findings, list(paths), options.archs)
    # a flag set on an object that nothing reads (judging.unread)
    findings = unread.demote(findings, naming)
    # a decision inside a private function nothing calls (judging.uncalled)
    findings = uncalled.demote(findings, naming)
    findings.sort(key=lambda f: (f.path, f.line, f.rule, f.arch))
    keep_until_exit(files)
    if not deps.missing:  # a release that could not be had: the next run may read it, answer anew
        cache.save(set(paths), {key: (findings, skipped)})
    return AnalyzerResult(findings=findings, skipped=skipped, files=len(paths) + len(unreadable))
