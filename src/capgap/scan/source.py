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
from capgap.scan.fileparse import facts_for_bytes
from capgap.scan.records import FileFacts

if TYPE_CHECKING:
    from capgap.targets import Target

ANALYZER_ID = "source"
_POOL_MIN_FILES = 400  # below this, starting workers costs more than it saves
_CHUNK = 48


def _relevant(path: Path) -> bool:
    return path.suffix == ".py" or is_build_file(path.name)


def _work(item: tuple[str, str]) -> tuple[str, str, FileFacts | None, str]:
    """Read and extract one file: (rel, digest, facts, unreadable-reason)."""
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
    return rel, digest(data), facts, ""


def _work_chunk(items: list[tuple[str, str]]) -> list[tuple[str, str, FileFacts | None, str]]:
    return [_work(i) for i in items]


def _walk(target: Target) -> Iterator[tuple[str, Path]]:
    from capgap.targets import iter_files

    root = target.root
    for path in iter_files(target):
        if _relevant(path):
            try:
                rel = path.relative_to(root).as_posix()
            except ValueError:
                rel = path.as_posix()
            yield rel, path


def collect(target: Target, options: ScanOptions) -> tuple[list[FileFacts], list[Skipped], int]:
    """Facts of every relevant file of the target (cached by content), skipped files, file count."""
    from capgap import output

    cache = ScanCache.open(target.root, options.use_cache)
    facts: list[FileFacts] = []
    skipped: list[Skipped] = []
    todo: list[tuple[str, str]] = []
    stats: dict[str, os.stat_result] = {}
    count = 0
    for rel, path in _walk(target):
        count += 1
        try:
            st = path.stat()
        except OSError as exc:  # a dangling link or a loop of links
            skipped.append(Skipped(rel, f"unreadable: {exc.strerror or exc}"))
            continue
        stats[rel] = st
        hit, cached = cache.lookup(rel, st)
        if hit:
            if cached is not None:
                facts.append(cached)
        else:
            todo.append((rel, str(path)))
    with output.progress(len(todo), "capgap scan") as bar:
        for rel, dig, got, unreadable in _run(todo, options, bar):
            if unreadable:
                skipped.append(Skipped(rel, unreadable))
                continue
            cache.store(rel, stats[rel], dig, got)
            if got is not None:
                facts.append(got)
    cache.save(set(stats))
    for f in facts:
        if f.skipped:
            skipped.append(Skipped(f.path, f.skipped))
    facts = [f for f in facts if not f.skipped]
    facts.sort(key=lambda f: f.path)
    return facts, sorted(skipped, key=lambda s: s.path), count


def _run(
    todo: list[tuple[str, str]], options: ScanOptions, bar: object
) -> Iterator[tuple[str, str, FileFacts | None, str]]:
    jobs = options.jobs or (os.cpu_count() or 1)
    if jobs > 1 and len(todo) >= _POOL_MIN_FILES:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        chunks = [todo[i : i + _CHUNK] for i in range(0, len(todo), _CHUNK)]
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method)) as pool:
            for chunk, results in zip(chunks, pool.map(_work_chunk, chunks), strict=False):
                yield from results
                bar.advance(len(chunk))  # type: ignore[attr-defined]
        return
    for item in todo:
        yield _work(item)
        bar.advance()  # type: ignore[attr-defined]


def analyze(target: Target, options: ScanOptions) -> AnalyzerResult:
    from capgap.scan import rules

    files, skipped, count = collect(target, options)
    reg = rules.Registry(files)
    findings: list[Finding] = []
    findings += rules.table_findings(files, options.archs, reg)
    findings += rules.gate_findings(files, options.archs, reg)
    findings += rules.build_findings(files, options.archs)
    findings.sort(key=lambda f: (f.path, f.line, f.rule, f.arch))
    return AnalyzerResult(findings=findings, skipped=skipped, files=count)
