"""SARIF 2.1.0 for `capgap scan --format sarif` (GitHub code scanning reads it)."""

from __future__ import annotations

from typing import Any

from capgap import __version__
from capgap.scan.run import ScanReport

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"high": "error", "medium": "warning", "low": "note"}
RULES = {
    "table-missing-arch": "A table keyed by compute capability has no entry for the target arch.",
    "gate-excludes-arch": "A capability gate is true for a recent arch and false for the target.",
    "gate-admits-unsupported": "A capability gate admits the target into code needing a feature it lacks.",
    "branch-refuses-feature": "The target's own arm of an arch decision refuses what other archs' arms take.",
    "registry-excludes-arch": "A kernel registered for an op declares arch windows without the target.",
    "build-missing-arch": "A build arch list names sibling archs but not the target.",
    "kernel-body-missing-arch": "A kernel compiles to an empty or trapping body for the target arch.",
    "binary-missing-arch": "A compiled library carries no code that runs on the target.",
    "config-missing-device": "Tuned kernel configs exist for sibling GPUs but not the target device.",
}


def to_sarif(report: ScanReport) -> dict[str, Any]:
    rule_ids = list(dict.fromkeys([*RULES, *(f.rule for f in report.findings)]))
    index = {rid: i for i, rid in enumerate(rule_ids)}
    rules = [
        {
            "id": rid,
            "name": "".join(p.capitalize() for p in rid.split("-")),
            "shortDescription": {"text": RULES.get(rid, rid)},
        }
        for rid in rule_ids
    ]
    results = []
    new = set(report.diff.new) if report.diff is not None else set()
    for i, (finding, ti) in enumerate(zip(report.findings, report.finding_targets, strict=True)):
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": finding.path, "uriBaseId": f"TARGET{ti}"}}
        }
        if finding.line >= 1:
            location["physicalLocation"]["region"] = {"startLine": finding.line}
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": _LEVEL.get(finding.severity, "warning"),
            "message": {"text": f"{finding.message}. Consequence: {finding.consequence}"},
            "locations": [location],
            # stable across line moves and reformatting (scan/fingerprint.py): code scanning
            # matches results of two runs by it
            "partialFingerprints": {"capgap/v2": report.fingerprints[i]},
            "properties": {
                "severity": finding.severity,
                "fingerprint": report.fingerprints[i],
                "symbol": finding.symbol,
                "arch": finding.arch,
                "present": list(finding.present),
                "missing": finding.missing,
                "consequence": finding.consequence,
            },
        }
        if report.diff is not None:  # --baseline / --against: SARIF's own word for it
            result["baselineState"] = "new" if i in new else "unchanged"
        reason = report.acknowledged.get(report.fingerprints[i])
        if reason is not None:  # acknowledged in the config: seen, intended
            result["suppressions"] = [{"kind": "external", "justification": reason}]
        results.append(result)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "capgap",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {
                    f"TARGET{i}": {"uri": t.target.root.as_uri() + "/"} for i, t in enumerate(report.targets)
                },
                "results": results,
                "properties": {
                    "archs": list(report.archs),
                    "skipped": [s.to_json() for s in report.skipped],
                },
            }
        ],
    }
