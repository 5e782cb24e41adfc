"""The Finding every rule reports (source, binary and config rules alike), and severities."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, replace
from typing import Any

SEVERITIES = ("low", "medium", "high")


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)


@dataclass(frozen=True)
class Finding:
    """One place where a target lacks (or wrongly admits) an arch, and what that costs.

    `path` is relative to the target's root; `symbol` names the table, gate, library or
    directory; `present` lists what the place has (arch keys, SASS archs, device names) and
    `missing` what it lacks for the target, in the place's own spelling.
    """

    rule: str
    severity: str
    path: str
    line: int
    symbol: str
    present: tuple[str, ...]
    missing: str
    consequence: str
    message: str
    arch: str = ""
    source: str = ""  # the source line (or a one-line summary) to show under the finding
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # the whole deciding text (a gate's full test, unparsed: one spelling whatever the layout) the
    # fingerprint is made of (scan/fingerprint.py); empty: the fingerprint reads `source`
    basis: str = field(default="", compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        # field by field: dataclasses.asdict deep-copies every value (11 ms for a scan's 157 findings)
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["present"] = list(self.present)
        data.pop("basis")
        if self.extra:
            data["extra"] = copy.deepcopy(self.extra)  # the caller's to keep: not our frozen state
        else:
            data.pop("extra")
        return data


def lowered(finding: Finding, why: str, key: str, said: str) -> Finding:
    """The finding rated low by a pass that reads more than its rule did: its consequence ends
    with `why`, and `extra[key]` holds `said` (what the pass read)."""
    return replace(
        finding,
        severity="low",
        consequence=f"{finding.consequence}; {why}",
        extra={**finding.extra, key: said},
    )


@dataclass(frozen=True)
class Skipped:
    """A file a scan could not read or parse, and why."""

    path: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}
