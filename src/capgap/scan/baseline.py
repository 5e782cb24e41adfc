"""Baselines: what is new, gone and unchanged against an earlier scan (a `--write-baseline` file
or any `--format json` output) or against an older target scanned now (`--against`).

Findings are matched by fingerprint (scan/fingerprint.py), which leaves out line, version and
root, so a file of another release or another checkout compares."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capgap.errors import UsageError

if TYPE_CHECKING:
    from capgap.scan.run import ScanReport
    from capgap.settings import Settings

MARKER = "capgap_baseline"  # a baseline file's first key; its value is the format
FORMAT = 1
_MAX_BYTES = 256 << 20
# what a stayed finding may have changed (the rest is what its fingerprint is made of)
_COMPARED = ("severity", "line", "present", "missing", "consequence", "message")


@dataclass
class Diff:
    label: str  # what the scan was compared with: the baseline's path, or the older target's spec
    new: list[int] = field(default_factory=list)  # indices into the report's findings
    stayed: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (index, its old self)
    gone: list[dict[str, Any]] = field(default_factory=list)  # old findings no longer found
    against: dict[str, Any] | None = None  # --against: the older target, as the report's targets
    patches: list[dict[str, Any]] = field(default_factory=list)  # --against: saved patches' verdicts
    patches_note: str = ""  # which store and release they were checked in, or why they were not

    def to_json(self, report: ScanReport) -> dict[str, Any]:
        out: dict[str, Any] = {"against": self.against} if self.against else {"baseline": self.label}
        out["new"] = [report.finding_json(i) for i in self.new]
        out["gone"] = self.gone
        out["stayed"] = [_with_before(report.finding_json(i), old) for i, old in self.stayed]
        if self.against is not None:
            out["patches"] = self.patches
            out["patches_checked"] = self.patches_note
        return out


def _with_before(now: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    before = {k: old[k] for k in _COMPARED if k in old and old[k] != now.get(k)}
    return {**now, "before": before} if before else now


def compare(report: ScanReport, old: list[dict[str, Any]], label: str, settings: Settings) -> Diff:
    """Match the report's findings with `old` ones by fingerprint. Old findings the configuration
    would not report now (an ignored rule, an excluded path) are neither gone nor stayed."""
    from capgap.scan.filters import wanted

    old = [f for f in old if wanted(str(f.get("rule", "")), str(f.get("path", "")), settings)]
    by_print = {str(f["fingerprint"]): f for f in old}
    diff = Diff(label)
    for i, fp in enumerate(report.fingerprints):
        if fp in by_print:
            diff.stayed.append((i, by_print[fp]))
        else:
            diff.new.append(i)
    now = set(report.fingerprints)
    diff.gone = [f for f in old if f["fingerprint"] not in now]
    return diff


def _read_json(path: Path, what: str) -> object:
    from capgap.boundedread import NotRegular, TooLarge, read_regular

    try:
        data = read_regular(path, _MAX_BYTES)
    except FileNotFoundError:
        raise UsageError(f"{what} {path}: no such file") from None
    except (NotRegular, TooLarge) as exc:
        raise UsageError(f"{what} {path}: {exc}; refusing it") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{what} {path} is not JSON ({str(exc)[:80] or type(exc).__name__})") from None


def _is_capgap_json(data: object) -> bool:
    """A baseline file, or the JSON of `capgap scan --format json`."""
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        return False
    return MARKER in data or {"arch", "targets"} <= set(data)


def load_baseline(path: str) -> list[dict[str, Any]]:
    """The findings of a baseline file (or a scan's JSON), each with its fingerprint."""
    where = Path(path).expanduser()
    data = _read_json(where, "the baseline")
    if not _is_capgap_json(data):
        raise UsageError(
            f"the baseline {path} is not a capgap baseline or `capgap scan --format json` output"
        )
    findings = data["findings"]  # type: ignore[index]
    for n, f in enumerate(findings):
        if not isinstance(f, dict) or not isinstance(f.get("fingerprint"), str):
            raise UsageError(
                f"the baseline {path}: finding {n + 1} has no fingerprint "
                "(written by an older capgap? write it again with --write-baseline)"
            )
    return findings  # type: ignore[no-any-return]


def check_writable(path: str) -> None:
    """Refuse, before any work, to replace a file that is not a baseline (or a scan's JSON)."""
    where = Path(path).expanduser()
    try:
        st = os.lstat(where)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"--write-baseline {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"--write-baseline {path}: it exists and is not a regular file; refusing it")
    try:
        existing = _read_json(where, "--write-baseline")
    except UsageError:
        existing = None
    if not _is_capgap_json(existing):
        raise UsageError(
            f"--write-baseline {path}: it exists and is not a capgap baseline; refusing to overwrite it"
        )


def write_baseline(path: str, report: ScanReport) -> int:
    """Write the report as a baseline, atomically (checked again: it may have changed during the
    scan). Returns how many findings it holds."""
    from capgap.patches.journal import atomic_write

    check_writable(path)
    data = report.to_json()
    for key in ("baseline", "against", "new", "gone", "stayed", "patches", "patches_checked"):
        data.pop(key, None)
    body = json.dumps({MARKER: FORMAT, **data}, indent=1) + "\n"
    try:
        atomic_write(Path(path).expanduser(), body.encode())
    except OSError as exc:
        raise UsageError(f"cannot write the baseline {path}: {exc.strerror or exc}") from None
    return len(report.findings)
