"""Measure `capgap scan` against hand-judged truth cases (issue 14, "Truth, measured in the project").

Each truth file (benchmarks/truth/<engine>-<version>.json, format in ../shared/design.md "Truth data")
lists arch decisions in one engine wheel, judged by reading the source: kind gap | expected |
not-a-gap | noise, the right severity and the statement's line span. This script downloads that wheel
(`pip download --no-deps`, cached in ~/.cache/capgap-truth/wheels), scans it with capgap in a fresh
process (its compiled libraries too where the file says `"binaries": true`) and matches findings
to cases: same path, and the same symbol (when both have one) or the
finding's line within the case's span with 2 lines of slack (a gate finding's symbol is the
predicate it tests, which a file tests in many places: it counts only within 12 lines, and only
for a finding whose line is inside no case's span: one there speaks of that statement).
It prints per engine and in total:

- recall: gap cases matched by a medium/high finding (any finding, for a gap whose right severity
  is low) / gap cases
- false alarms: not-a-gap cases matched at medium/high / not-a-gap cases
- over-rated: expected or noise cases matched at medium/high / (expected + noise) cases
- severity agreement: found gaps whose best (highest) matched severity is the case's / found gaps
- judged precision: medium/high findings matching a gap case / medium/high findings matching any case
- unjudged: medium/high findings that match no case

A finding at severity low is "reported but low": it counts for none of the above.

Run from the repository root:
    python benchmarks/truth.py                      # every benchmarks/truth/*.json
    python benchmarks/truth.py ../notes/truth/*.json --verbose
    python benchmarks/truth.py --capgap /other/venv/bin/python --json out.json
Exit status 0, or 2 on a usage error (a missing or malformed truth file, an unusable --capgap).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRUTH_DIR = REPO / "benchmarks" / "truth"
WHEEL_CACHE = Path.home() / ".cache" / "capgap-truth" / "wheels"
SLACK = 2
REPORTED = ("medium", "high")
SEVERITY_RANK = {"low": 0, "medium": 1, "high": 2}
KINDS = ("gap", "expected", "not-a-gap", "noise")
# Engines whose PyPI distribution is not named like the engine.
DISTRIBUTIONS = {"flashinfer": "flashinfer-python"}
TARGETS = {
    "recall": (">=", 0.80),
    "false_alarms": ("<=", 0.10),
    "over_rated": ("<=", 0.10),
    "severity": (">=", 0.80),
}


class UsageError(Exception):
    """Bad input from the command line: reported in one line, exit 2."""


@dataclass(frozen=True)
class Case:
    path: str
    span: tuple[int, int]
    symbol: str | None
    kind: str
    severity: str | None
    consequence: str


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    symbol: str | None
    rule: str
    severity: str
    message: str


@dataclass(frozen=True)
class Truth:
    engine: str
    version: str
    arch: str
    distribution: str
    cases: tuple[Case, ...]
    binaries: bool = False  # "binaries": true: the wheel's compiled libraries are judged too


@dataclass
class Score:
    """Raw counts and the cases/findings behind them, for one engine or the total."""

    gaps: int = 0
    found_gaps: int = 0
    severity_agree: int = 0
    not_a_gap: int = 0
    false_alarms: int = 0
    expected_noise: int = 0
    over_rated: int = 0
    judged: int = 0
    judged_gap: int = 0
    unjudged: int = 0
    reported_low: int = 0
    missed: list[dict[str, object]] = field(default_factory=list)
    false_alarm_cases: list[dict[str, object]] = field(default_factory=list)
    over_rated_cases: list[dict[str, object]] = field(default_factory=list)
    severity_wrong: list[dict[str, object]] = field(default_factory=list)
    unjudged_findings: list[dict[str, object]] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


# --- reading truth files -------------------------------------------------------------------------


def load_truth(path: Path) -> Truth:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases = tuple(_case(item) for item in data["items"])
        engine, version = str(data["engine"]), str(data["version"])
        arch = str(data.get("arch", "12.0"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a readable truth file ({type(exc).__name__}: {exc})") from None
    distribution = str(data.get("distribution") or DISTRIBUTIONS.get(engine, engine))
    return Truth(engine, version, arch, distribution, cases, data.get("binaries") is True)


def _case(item: dict[str, object]) -> Case:
    span = item.get("span") or [item["line"], item["line"]]
    first, last = (int(v) for v in span)  # type: ignore[call-overload]
    kind = str(item["kind"])
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} at {item['path']}:{first}")
    severity = item.get("severity")
    return Case(
        str(item["path"]),
        (first, last),
        _text_or_none(item.get("symbol")),
        kind,
        None if severity is None else str(severity),
        str(item.get("consequence", "")),
    )


def _text_or_none(value: object) -> str | None:
    return str(value) if value else None


# --- getting findings ----------------------------------------------------------------------------


def fetch_wheel(distribution: str, version: str, cache: Path = WHEEL_CACHE) -> Path:
    """The engine's wheel, from the cache or `pip download --no-deps`."""
    cached = _cached_wheel(distribution, version, cache)
    if cached is not None:
        return cached
    cache.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "-d",
        str(cache),
        f"{distribution}=={version}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    cached = _cached_wheel(distribution, version, cache)
    if done.returncode != 0 or cached is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel saved"]
        raise RuntimeError(f"pip download {distribution}=={version} failed: {tail[0]}")
    return cached


def _cached_wheel(distribution: str, version: str, cache: Path) -> Path | None:
    stem = distribution.replace("-", "_").lower()
    for wheel in sorted(cache.glob("*.whl")):
        name, _, rest = wheel.name.partition("-")
        # `torch-2.13.0+cpu-...`: a local version label (a CPU build of the same source) is the version
        if name.lower() == stem and rest.split("-", 1)[0].partition("+")[0] == version:
            return wheel
    return None


def scan_command(python: str, wheel: Path, arch: str, binaries: bool = False) -> list[str]:
    skip = [] if binaries else ["--no-binaries"]
    return [
        python,
        "-m",
        "capgap",
        "scan",
        str(wheel),
        "--arch",
        arch,
        "--all",
        *skip,
        "--no-cache",
        "--format",
        "json",
    ]


def run_scan(python: str, wheel: Path, arch: str, binaries: bool = False) -> list[Finding]:
    """Findings of a fresh capgap process; exit 1 only means a finding reached --fail-on."""
    env = dict(os.environ)
    if python == sys.executable:  # this checkout's capgap, whatever else is installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    done = subprocess.run(
        scan_command(python, wheel, arch, binaries), capture_output=True, text=True, env=env, check=False
    )
    if done.returncode not in (0, 1):
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise RuntimeError(f"capgap scan {wheel.name} failed: {tail[0]}")
    return parse_findings(json.loads(done.stdout))


def parse_findings(report: dict[str, object]) -> list[Finding]:
    roots = [str(t.get("root", "")) for t in report.get("targets", [])]  # type: ignore[union-attr]
    return [
        Finding(
            _relative(str(f["path"]), roots),
            int(f.get("line") or 0),
            _text_or_none(f.get("symbol")),
            str(f["rule"]),
            str(f["severity"]),
            str(f.get("message", "")),
        )
        for f in report.get("findings", [])  # type: ignore[union-attr]
    ]


def _relative(path: str, roots: Iterable[str]) -> str:
    """Paths relative to the wheel root, as the truth files spell them."""
    for root in roots:
        if root and path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    return path.removeprefix("./")


# --- matching and counting -----------------------------------------------------------------------


# A decision's symbol is the predicate it tests (`is_sm100`), which a file may test in dozens of
# places: a gate finding matches a case by its symbol only near it (a predicate's return is
# reported at its `def` line, a few lines above the statement judged), else by its line. A
# table's or build list's symbol is its own name.
_NEAR_ONLY = ("gate-excludes-arch", "gate-admits-unsupported")
_NEAR = 12


# A table is named by its case and its finding alike: a table defined within the slack of another
# table's span (vLLM's SYMM_MEM_ALL_REDUCE_MAX_SIZES two lines under CUSTOM_ALL_REDUCE_MAX_SIZES)
# is not that table. `Class.NAME` and `NAME` are one name. A table written inline (`{9: 32, 10:
# 16}.get(major, 0)`) is named by its text, which no judge writes: it matches by its line.
_NAMED_ONLY = ("table-missing-arch",)
_INLINE = ("{", "(", "[")


def _same_symbol(finding: Finding, case: Case) -> bool:
    return bool(finding.symbol and case.symbol) and (
        finding.symbol.rsplit(".", 1)[-1] == case.symbol.rsplit(".", 1)[-1]
    )


def matches(finding: Finding, case: Case) -> bool:
    if finding.path != case.path:
        return False
    near = case.span[0] - _NEAR <= finding.line <= case.span[1] + _NEAR
    named = finding.rule not in _NEAR_ONLY or near
    if named and finding.symbol and case.symbol:
        if _same_symbol(finding, case):
            return True
        if finding.rule in _NAMED_ONLY and not finding.symbol.startswith(_INLINE):
            return False
    return case.span[0] - SLACK <= finding.line <= case.span[1] + SLACK


def reported(finding: Finding) -> bool:
    return finding.severity in REPORTED


def best_severity(findings: Iterable[Finding]) -> str | None:
    ranked = sorted(findings, key=lambda f: SEVERITY_RANK.get(f.severity, -1))
    return ranked[-1].severity if ranked else None


def score(cases: Sequence[Case], findings: Sequence[Finding]) -> Score:
    result = Score()
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for case in cases:
        _score_case(result, case, [f for f in by_path.get(case.path, []) if _owned_by(f, case, cases)])
    for finding in filter(reported, findings):
        _score_finding(result, finding, [c for c in cases if _owned_by(finding, c, cases)])
    return result


def within(finding: Finding, case: Case, slack: int = SLACK) -> bool:
    return finding.path == case.path and case.span[0] - slack <= finding.line <= case.span[1] + slack


def _owned_by(finding: Finding, case: Case, cases: Sequence[Case]) -> bool:
    """Does the finding speak of this case? A finding on a line inside some case's span speaks of
    that statement: it matches another case nearby only by the same symbol's name in a table's
    finding, never through the window a predicate's symbol is matched in, nor through the slack
    of a neighbouring statement's span (`elif is_sm100:` two lines under a judged `return "fa3"`)."""
    if not matches(finding, case):
        return False
    if (
        not within(finding, case, slack=0)
        and not _same_symbol(finding, case)
        and any(within(finding, other, slack=0) for other in cases if other is not case)
    ):
        return False
    if within(finding, case) or finding.rule not in _NEAR_ONLY:
        return True
    return not any(within(finding, other) for other in cases)


def _score_case(result: Score, case: Case, matched: list[Finding]) -> None:
    loud = [f for f in matched if reported(f)]
    if case.kind == "gap" and case.severity == "low":
        loud = matched  # a minor gap is rightly reported at low
    if matched and not loud:
        result.reported_low += 1
    if case.kind == "gap":
        result.gaps += 1
        if not loud:
            result.missed.append(_case_row(case, matched))
            return
        result.found_gaps += 1
        if best_severity(loud) == case.severity:
            result.severity_agree += 1
        else:
            result.severity_wrong.append(_case_row(case, loud))
    elif case.kind == "not-a-gap":
        result.not_a_gap += 1
        if loud:
            result.false_alarms += 1
            result.false_alarm_cases.append(_case_row(case, loud))
    else:
        result.expected_noise += 1
        if loud:
            result.over_rated += 1
            result.over_rated_cases.append(_case_row(case, loud))


def _score_finding(result: Score, finding: Finding, matched: list[Case]) -> None:
    if not matched:
        result.unjudged += 1
        result.unjudged_findings.append(_finding_row(finding))
        return
    result.judged += 1
    if any(c.kind == "gap" for c in matched):
        result.judged_gap += 1


def _case_row(case: Case, matched: Iterable[Finding]) -> dict[str, object]:
    row: dict[str, object] = {k: v for k, v in asdict(case).items()}
    row["span"] = list(case.span)
    row["findings"] = [_finding_row(f) for f in matched]
    return row


def _finding_row(finding: Finding) -> dict[str, object]:
    return asdict(finding)


# --- presenting ----------------------------------------------------------------------------------


def ratios(s: Score) -> dict[str, tuple[int, int]]:
    return {
        "recall": (s.found_gaps, s.gaps),
        "false_alarms": (s.false_alarms, s.not_a_gap),
        "over_rated": (s.over_rated, s.expected_noise),
        "severity": (s.severity_agree, s.found_gaps),
        "judged_precision": (s.judged_gap, s.judged),
    }


def fraction(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else f"{part}/{whole} (n/a)"


def verdict(name: str, part: int, whole: int) -> str:
    if name not in TARGETS:
        return ""
    op, bound = TARGETS[name]
    if not whole:
        return f"  target {op} {bound:.0%}: n/a"
    value = part / whole
    met = value >= bound if op == ">=" else value <= bound
    return f"  target {op} {bound:.0%}: {'met' if met else 'NOT met'}"


def summary_lines(title: str, s: Score) -> list[str]:
    labels = {
        "recall": "recall",
        "false_alarms": "false alarms",
        "over_rated": "over-rated",
        "severity": "severity agreement",
        "judged_precision": "judged precision",
    }
    lines = [title]
    for name, (part, whole) in ratios(s).items():
        lines.append(f"  {labels[name]:<20}{fraction(part, whole):<16}{verdict(name, part, whole)}")
    lines.append(f"  {'unjudged':<20}{s.unjudged} medium/high findings match no case")
    lines.append(f"  {'reported low':<20}{s.reported_low} cases matched only by low findings")
    return lines


def detail_lines(s: Score) -> list[str]:
    lines: list[str] = []
    for title, rows in (
        ("missed gaps", s.missed),
        ("false alarms", s.false_alarm_cases),
        ("over-rated", s.over_rated_cases),
        ("severity differs", s.severity_wrong),
    ):
        lines.append(f"  {title} ({len(rows)}):")
        lines.extend(_case_detail(row) for row in rows)
    lines.append(f"  unjudged findings ({len(s.unjudged_findings)}):")
    lines.extend("    " + _finding_detail(row) for row in s.unjudged_findings)
    return lines


def _case_detail(row: dict[str, object]) -> str:
    span = row["span"]
    head = f"    {row['path']}:{span[0]}-{span[1]} [{row['kind']}/{row['severity']}] {row['consequence']}"  # type: ignore[index]
    found = [_finding_detail(f) for f in row["findings"]]  # type: ignore[attr-defined]
    return "\n".join([head, *("      <- " + f for f in found)])


def _finding_detail(row: dict[str, object]) -> str:
    return f"{row['path']}:{row['line']} {row['rule']} {row['severity']} {row['message']}"


# --- command line --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("truth", nargs="*", type=Path, help="truth files (default: benchmarks/truth/*.json)")
    parser.add_argument("--capgap", default=sys.executable, help="interpreter whose capgap scans")
    parser.add_argument("--verbose", action="store_true", help="list each miss, false alarm and more")
    parser.add_argument("--json", type=Path, dest="json_out", help="write all numbers and lists here")
    return parser.parse_args(argv)


def truth_files(given: Sequence[Path]) -> list[Path]:
    files = list(given) or sorted(TRUTH_DIR.glob("*.json"))
    if not files:
        raise UsageError(f"no truth files given and none in {TRUTH_DIR}")
    return files


def check_capgap(python: str) -> str:
    """The version `python -m capgap` reports; a usage error when it does not run."""
    found = shutil.which(python)
    command = [found or python, "-m", "capgap", "--version"]
    done = subprocess.run(command, capture_output=True, text=True, check=False) if found else None
    if done is None or done.returncode != 0:
        raise UsageError(f"--capgap {python}: `{python} -m capgap --version` does not run")
    return done.stdout.strip()


def measure(truth: Truth, python: str) -> Score:
    wheel = fetch_wheel(truth.distribution, truth.version)
    return score(truth.cases, run_scan(python, wheel, truth.arch, truth.binaries))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        truths = [(path, load_truth(path)) for path in truth_files(args.truth)]
        version = check_capgap(args.capgap)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"capgap: {args.capgap} -m capgap ({version})")
    total, report = Score(), {"capgap": args.capgap, "version": version, "engines": {}, "errors": {}}
    for path, truth in truths:
        name = f"{truth.engine} {truth.version} ({len(truth.cases)} cases, {path.name})"
        try:
            engine_score = measure(truth, args.capgap)
        except (RuntimeError, ValueError) as exc:
            print(f"{name}\n  skipped: {exc}")
            report["errors"][name] = str(exc)  # type: ignore[index]
            continue
        total.add(engine_score)
        _print_score(name, engine_score, args.verbose)
        report["engines"][name] = _json_score(engine_score)  # type: ignore[index]
    _print_score("total", total, verbose=False)
    report["total"] = _json_score(total)
    if args.json_out:
        try:
            args.json_out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"error: --json {args.json_out}: {exc.strerror}", file=sys.stderr)
            return 2
    return 0


def _print_score(title: str, s: Score, verbose: bool) -> None:
    print("\n".join(summary_lines(title, s) + (detail_lines(s) if verbose else [])))


def _json_score(s: Score) -> dict[str, object]:
    data: dict[str, object] = asdict(s)
    data["ratios"] = {name: {"part": p, "whole": w} for name, (p, w) in ratios(s).items()}
    return data


if __name__ == "__main__":
    sys.exit(main())
