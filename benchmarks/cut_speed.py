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


def cut_all(files: list[tuple[Path, bytes]]) -> tuple[float, list[chunks.Cut]]:
    start = time.perf_counter()
    cuts = [chunks.select(data) for _, data in files]
    return time.perf_counter() - start, cuts


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
    seconds: dict[str, list[float]] = {"c": [], "python": []}
    differ: list[Path] = []
    for _ in range(args.rounds):
        chunks._cutscan = extension
        t_c, with_c = cut_all(files)
        chunks._cutscan = None
        t_py, with_py = cut_all(files)
        seconds["c"].append(t_c)
        seconds["python"].append(t_py)
        differ = [p for (p, _), a, b in zip(files, with_c, with_py, strict=True) if a != b]
    chunks._cutscan = extension
    size = sum(len(data) for _, data in files)
    print(f"tree: {args.tree}")
    print(f"candidates: {len(files)} files, {size / 1e6:.1f} MB; cuts identical: {not differ}")
    for path in differ:
        print(f"  differs: {path}")
    print(f"env: python {platform.python_version()}, {platform.machine()}, {platform.processor() or '-'}")
    for name, samples in seconds.items():
        raw = " ".join(f"{s:.3f}" for s in samples)
        print(f"{name:>7}: {raw}  median {statistics.median(samples):.3f} s")
    ratio = statistics.median(seconds["python"]) / statistics.median(seconds["c"])
    print(f"python / c: {ratio:.2f}x")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
