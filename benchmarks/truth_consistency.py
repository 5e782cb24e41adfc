"""Decisions the truth judges differently from one version to another.

    python benchmarks/truth_consistency.py [TRUTH.json ...] [--cache DIR]

A case is keyed by its engine, target arch, path and the source text of its span, read from the
version's wheel in the cache `benchmarks/truth.py` fills (nothing is downloaded: run that first).
Where the same statement, unchanged, is judged with different kinds (or a gap with different
severities) in two truth files, one of them is wrong, and capgap cannot agree with both: such groups
are printed, one block each. Cases whose wheel is not cached, or whose file or lines are not in it,
are counted as unread. Default: every truth file under benchmarks/truth/. Exit status 0, or 2 on
a usage error (a missing or malformed truth file).
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import truth  # noqa: E402  (benchmarks/truth.py: the truth files' reader and wheel cache)

Key = tuple[str, str, str, str]  # engine, arch, path, the span's text
Verdict = tuple[str, str, str, str | None]  # version, truth file, kind, severity


def statement(wheel: zipfile.ZipFile, path: str, span: tuple[int, int]) -> str | None:
    """The span's lines of `path` in the wheel, each stripped (indentation aside, the same
    statement reads the same in every version); None when the file or the lines are missing."""
    try:
        text = wheel.read(path).decode("utf-8", errors="replace")
    except KeyError:
        return None
    lines = text.splitlines()
    first, last = span
    if first < 1 or last > len(lines) or last < first:
        return None
    return "\n".join(line.strip() for line in lines[first - 1 : last])


def verdicts(files: Sequence[Path], cache: Path) -> tuple[dict[Key, list[Verdict]], int]:
    """Each statement's verdicts over the truth files, and how many cases could not be read."""
    out: dict[Key, list[Verdict]] = defaultdict(list)
    unread = 0
    for path in files:
        judged = truth.load_truth(path)
        found = truth._cached_wheel(judged.distribution, judged.version, cache)
        if found is None:
            unread += len(judged.cases)
            continue
        with zipfile.ZipFile(found) as wheel:
            for case in judged.cases:
                text = statement(wheel, case.path, case.span)
                if text is None:
                    unread += 1
                    continue
                key = (judged.engine, judged.arch, case.path, text)
                severity = case.severity if case.kind == "gap" else None
                out[key].append((judged.version, path.name, case.kind, severity))
    return out, unread


def disagreements(found: dict[Key, list[Verdict]]) -> list[tuple[Key, list[Verdict]]]:
    """The statements judged with more than one kind (or gap severity)."""
    return [(key, seen) for key, seen in found.items() if len({(kind, sev) for _, _, kind, sev in seen}) > 1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="truth files (default: all of benchmarks/truth/)")
    parser.add_argument("--cache", type=Path, default=truth.WHEEL_CACHE, help="the wheels truth.py keeps")
    args = parser.parse_args(argv)
    files = list(args.files) or sorted(truth.TRUTH_DIR.rglob("*.json"))
    try:
        found, unread = verdicts(files, args.cache)
    except truth.UsageError as exc:
        print(f"truth_consistency: {exc}", file=sys.stderr)
        return 2
    split = disagreements(found)
    for (engine, arch, path, text), seen in sorted(split):
        head = text.split("\n", 1)[0][:90]
        print(f"{engine} at {arch}: {path}: {head}")
        for version, name, kind, severity in sorted(seen):
            print(f"  {version:<12} {kind}{'/' + severity if severity else ''}  ({name})")
    cases = sum(len(seen) for seen in found.values())
    print(
        f"{len(split)} statements judged differently, of {len(found)} read in {cases} cases; {unread} unread"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
