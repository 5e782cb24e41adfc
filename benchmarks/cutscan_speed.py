"""Every byte scan of the C extension `capgap.reading._cutscan` against its Python reference,
side by side in one run, answers compared.

    python benchmarks/cutscan_speed.py TREE [--rounds 7]

TREE: an unpacked engine wheel, e.g. the one `capgap scan sglang==0.5.23` leaves in capgap's
cache (~/.cache/capgap/unpacked/sglang-0.5.23-...). Reads the files grep's pre-pass would hand
the workers (those holding a pre-filter token), then alternates round by round, once with the C
scans ("c") and once with the Python reference ("python"), timing with time.process_time:
- relevance: `fileparse.relevance` of every candidate (worth parsing, build tokens);
- select: the statement cut of every file worth parsing (C: `_cutscan.select`, the whole cut),
  then each of its byte scans alone (quotes, hits in code, module-level statement starts);
- hint lines: the two `HintLines` the extractor builds over every cut.
Prints whether both ways answered the same, raw samples, the environment, minimums and python / c.
Exit 1 when an answer differs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

from capgap.judging import builds, extract
from capgap.reading import chunks, fileparse
from capgap.reading.grepfilter import TOKENS
from capgap.reading.hintlines import HintLines

Inputs = tuple[list[tuple[bool, bytes]], list[bytes], list[tuple[bytes, list[str]]]]


def candidates(tree: Path) -> Inputs:
    """(every candidate file, those worth parsing, the cuts the extractor reads: bytes and lines)."""
    files = []
    for path in sorted(tree.rglob("*")):
        is_python = path.name.endswith(".py")
        if path.is_symlink() or not path.is_file() or not (is_python or builds.is_build_file(path.name)):
            continue
        data = path.read_bytes()
        if any(tok in data.lower() for tok in TOKENS):
            files.append((is_python, data))
    worth = [d for p, d in files if p and b"\0" not in d and fileparse.relevance(d, True)[0]]
    cuts = []
    for data in worth:
        text = chunks.select(data).text
        try:
            cuts.append((text, text.decode("utf-8-sig").splitlines()))
        except UnicodeDecodeError:
            continue
    return files, worth, cuts


def steps(inputs: Inputs) -> dict[str, Callable[[], object]]:
    files, worth, cuts = inputs
    return {
        "relevance": lambda: [fileparse.relevance(d, p) for p, d in files],
        "select": lambda: [chunks.select(d) for d in worth],
        "  quotes": lambda: [chunks._quote_offsets(d) for d in worth],
        "  hits": lambda: [chunks._hits_in_code(d, chunks._quote_offsets(d)) for d in worth],
        "  starts": lambda: [
            chunks._statement_starts(d, b"", 0, len(d), chunks._quote_offsets(d)) for d in worth
        ],
        "hint lines": lambda: [
            (
                HintLines(lines, extract._GATE_HINTS, data)._lines,
                HintLines(lines, extract._HINTS, data)._lines,
            )
            for data, lines in cuts
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    extension = chunks._cutscan
    if extension is None:
        print("capgap.reading._cutscan is not built: `pip install -e .` with a C compiler", file=sys.stderr)
        return 2
    inputs = candidates(args.tree)
    timed = steps(inputs)
    samples: dict[tuple[str, str], list[float]] = {(s, w): [] for s in timed for w in ("c", "python")}
    answers: dict[tuple[str, str], object] = {}
    for _ in range(args.rounds):
        for way, ext in (("c", extension), ("python", None)):
            chunks._cutscan = ext
            for step, run in timed.items():
                start = time.process_time()
                answers[step, way] = run()
                samples[step, way].append(time.process_time() - start)
    chunks._cutscan = extension
    files, worth, cuts = inputs
    print(f"tree: {args.tree}")
    print(
        f"candidates: {len(files)} files, {sum(len(d) for _, d in files) / 1e6:.1f} MB; worth parsing: "
        f"{len(worth)}; cuts read: {len(cuts)} ({sum(d.isascii() for d, _ in cuts)} ASCII: hint lines in C)"
    )
    print(f"env: python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus")
    print(f"{'min ms':>12} {'c':>8} {'python':>8} {'python/c':>8}  same")
    differ = False
    for step in timed:
        same = answers[step, "c"] == answers[step, "python"]
        differ |= not same
        c, py = min(samples[step, "c"]), min(samples[step, "python"])
        print(f"{step:>12} {c * 1e3:8.1f} {py * 1e3:8.1f} {py / c:7.1f}x  {same}")
    for (step, way), raw in samples.items():
        print(f"  {step.strip()}, {way}: " + " ".join(f"{s * 1e3:.1f}" for s in raw) + " ms")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
