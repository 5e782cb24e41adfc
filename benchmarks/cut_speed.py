"""The statement cut (`chunks.select`) with and without its C byte scans, side by side in one run.

    python benchmarks/cut_speed.py TREE [--rounds 5]

TREE: an unpacked engine wheel, e.g. the one `capgap scan sglang==0.5.23` leaves in capgap's
cache (~/.cache/capgap/unpacked/sglang-0.5.23-...). Reads every .py file once, keeps the
candidates a scan would cut (`prefilter.worth_parsing`), then alternates round by round: all of
them cut with `capgap.scan._cutscan` ("c"), all of them cut with the Python scans ("python").
Checks that both give the same `Cut` for every file, then prints raw samples, the environment,
medians and the ratio python / c.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from capgap.scan import chunks
from capgap.scan.prefilter import worth_parsing


def candidates(tree: Path) -> list[tuple[Path, bytes]]:
    files = [(p, p.read_bytes()) for p in sorted(tree.rglob("*.py"))]
    return [(p, data) for p, data in files if worth_parsing(data)]


STAGES = ("select", "quotes", "hits", "starts")


def time_all(files: list[tuple[Path, bytes]]) -> tuple[dict[str, float], list[chunks.Cut]]:
    """Seconds for the whole cut of every file, then for each of its three byte scans alone."""
    data = [d for _, d in files]
    start = time.perf_counter()
    cuts = [chunks.select(d) for d in data]
    seconds = {"select": time.perf_counter() - start}
    start = time.perf_counter()
    quotes = [chunks._quote_offsets(d) for d in data]
    seconds["quotes"] = time.perf_counter() - start
    start = time.perf_counter()
    for d, q in zip(data, quotes, strict=True):
        chunks._hits_in_code(d, q)
    seconds["hits"] = time.perf_counter() - start
    start = time.perf_counter()
    for d, q in zip(data, quotes, strict=True):
        chunks._statement_starts(d, b"", 0, len(d), q)
    seconds["starts"] = time.perf_counter() - start  # module level only; blocks are scanned too
    return seconds, cuts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    extension = chunks._cutscan
    if extension is None:
        print("capgap.scan._cutscan is not built: `pip install -e .` with a C compiler", file=sys.stderr)
        return 2
    files = candidates(args.tree)
    samples: dict[str, dict[str, list[float]]] = {way: {s: [] for s in STAGES} for way in ("c", "python")}
    differ: list[Path] = []
    for _ in range(args.rounds):
        chunks._cutscan = extension
        with_c, cuts_c = time_all(files)
        chunks._cutscan = None
        with_py, cuts_py = time_all(files)
        for stage in STAGES:
            samples["c"][stage].append(with_c[stage])
            samples["python"][stage].append(with_py[stage])
        differ = [p for (p, _), a, b in zip(files, cuts_c, cuts_py, strict=True) if a != b]
    chunks._cutscan = extension
    size = sum(len(data) for _, data in files)
    print(f"tree: {args.tree}")
    print(f"candidates: {len(files)} files, {size / 1e6:.1f} MB; cuts identical: {not differ}")
    for path in differ:
        print(f"  differs: {path}")
    print(f"env: python {platform.python_version()}, {platform.machine()}, {platform.processor() or '-'}")
    for way, stages in samples.items():
        raw = " ".join(f"{s:.3f}" for s in stages["select"])
        print(f"select, {way:>6}: {raw} s")
    print(f"{'median s':>8} {'c':>7} {'python':>7} {'python/c':>8}")
    for stage in STAGES:
        c, py = (statistics.median(samples[way][stage]) for way in ("c", "python"))
        print(f"{stage:>8} {c:7.3f} {py:7.3f} {py / c:7.2f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
