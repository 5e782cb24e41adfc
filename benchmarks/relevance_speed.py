"""The per-file relevance test and the hint-line search with and without `capgap.scan._cutscan`.

    python benchmarks/relevance_speed.py TREE [--rounds 7]

TREE: an unpacked engine wheel (e.g. ~/.cache/capgap/unpacked/sglang-0.5.23-...). Reads the files
grep's pre-pass would hand the workers (those holding a pre-filter token), then alternates round by
round, timing with time.process_time: `fileparse.relevance` over every candidate (worth parsing,
build tokens), and the two `HintLines` the extractor builds per file over every statement cut,
once with the C scans ("c"), once with the Python reference ("python"). Checks both give the same
answers, then prints raw samples, the environment, minimums and the ratio python / c.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from capgap.scan import builds, chunks, extract, fileparse
from capgap.scan.grepfilter import TOKENS
from capgap.scan.hintlines import HintLines


def candidates(tree: Path) -> list[tuple[bool, bytes]]:
    out = []
    for path in sorted(tree.rglob("*")):
        is_python = path.name.endswith(".py")
        if path.is_symlink() or not path.is_file() or not (is_python or builds.is_build_file(path.name)):
            continue
        data = path.read_bytes()
        if any(tok in data.lower() for tok in TOKENS):
            out.append((is_python, data))
    return out


def cuts(files: list[tuple[bool, bytes]]) -> list[tuple[bytes, list[str]]]:
    """The statement cut of every file the extractor reads: its bytes and its lines."""
    out = []
    for is_python, data in files:
        if fileparse.relevance(data, is_python)[0] and b"\0" not in data:
            text = chunks.select(data).text
            try:
                out.append((text, text.decode("utf-8-sig").splitlines()))
            except UnicodeDecodeError:
                continue
    return out


def run_relevance(files: list[tuple[bool, bytes]]) -> list[tuple[bool, bool]]:
    return [fileparse.relevance(data, is_python) for is_python, data in files]


def run_hints(texts: list[tuple[bytes, list[str]]]) -> list[tuple[list[int], list[int]]]:
    return [
        (HintLines(lines, extract._GATE_HINTS, data)._lines, HintLines(lines, extract._HINTS, data)._lines)
        for data, lines in texts
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    extension = chunks._cutscan
    if extension is None:
        print("capgap.scan._cutscan is not built: `pip install -e .` with a C compiler", file=sys.stderr)
        return 2
    files = candidates(args.tree)
    texts = cuts(files)
    steps = {"relevance": (run_relevance, files), "hint lines": (run_hints, texts)}
    samples = {(step, way): [] for step in steps for way in ("c", "python")}
    answers: dict[tuple[str, str], object] = {}
    for _ in range(args.rounds):
        for way, ext in (("c", extension), ("python", None)):
            chunks._cutscan = ext
            for step, (run, inputs) in steps.items():
                start = time.process_time()
                answers[step, way] = run(inputs)  # type: ignore[operator]
                samples[step, way].append(time.process_time() - start)
    chunks._cutscan = extension
    ascii_cuts = sum(data.isascii() for data, _ in texts)
    print(f"tree: {args.tree}")
    size = sum(len(d) for _, d in files)
    print(f"candidates: {len(files)} files, {size / 1e6:.1f} MB; cuts read: {len(texts)}")
    print(f"  ({ascii_cuts} ASCII, searched in C; the others by the Python reference either way)")
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus")
    for step in steps:
        same = answers[step, "c"] == answers[step, "python"]
        c, py = min(samples[step, "c"]), min(samples[step, "python"])
        print(f"{step}: identical {same}; min c {c * 1e3:.1f} ms, python {py * 1e3:.1f} ms", end="")
        print(f", python / c {py / c:.1f}")
        for way in ("c", "python"):
            print(f"  {way} samples (ms): " + " ".join(f"{s * 1e3:.1f}" for s in samples[step, way]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
