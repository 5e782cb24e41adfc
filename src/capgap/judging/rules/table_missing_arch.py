"""table-missing-arch: a table keyed by compute capability has no entry for the target.

Severity by what the missing entry does where the table is read: high for a KeyError (an unguarded
subscript), medium for a path silently off (`.get()`, `in`, a caught KeyError), low when the
table is about a feature the target lacks (a multimem world-size table on a GPU without NVLS
multicast). One table gives one finding per arch, at its definition, with its reads named.
"""

from __future__ import annotations

import re
from typing import Any

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence
from capgap.judging.keys import covers, key_for
from capgap.judging.records import FileFacts, TableDef, TableUse
from capgap.judging.registry import Registry
from capgap.judging.symbolic import evaluate
from capgap.judging.where import placement

RULE_ID = "table-missing-arch"
_ACCESS_RANK = {"subscript": 0, "get": 1, "in": 2, "try": 3}
_STRONG_STYLES = {"dotted-str", "sm-str", "tuple"}
# Names of tables that list what is refused, not what is supported (REFUSED_CAPABILITY_REASONS).
_DENY_NAME = re.compile(
    r"(?:^|_)(?:refuse[ds]?|refusals?|deny|denied|denylist|blocked|blocklist|blacklist(?:ed)?|unsupported"
    r"|not_supported|broken|skip(?:s|ped)?|exclude[ds]?|exclusions?|disallowed|banned|incompatible"
    r"|disabled?)(?:_|$)",
    re.I,
)


def _cap_key(use: TableUse, f: FileFacts, reg: Registry) -> bool:
    sym = evaluate(use.key, reg.context(use.scope, f))
    return sym.kind in {"cap", "namecap"}


def findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    out: list[Finding] = []
    for f in files:
        for table in f.tables:
            uses = [(uf, u) for uf, u in reg.uses.get(table.name, []) if _cap_key(u, uf, reg)]
            if not (uses or table.named_like_arch or table.style in _STRONG_STYLES):
                continue
            if _DENY_NAME.search(table.name) or any(u.denies for _, u in uses):
                continue  # a table of refusals lacking the arch refuses nothing there: no gap
            for arch in archs:
                if any(covers(table.style, k.cc, arch) for k in table.keys):
                    continue
                out.append(_table_finding(f, table, arch, uses))
    return out


def _best_use(f: FileFacts, uses: list[tuple[FileFacts, TableUse]]) -> tuple[FileFacts, TableUse] | None:
    if not uses:
        return None
    try_lines = {(uf.path, u.line) for uf, u in uses if u.access == "try"}
    # `if key in T: ... T[key]` (here or in a caller): the membership test guards the subscript
    guarded = any(u.access == "in" for _, u in uses)
    uses = [
        (uf, u)
        for uf, u in uses
        if not (u.access == "subscript" and ((uf.path, u.line) in try_lines or guarded))
    ]
    # a KeyError anywhere is the worst outcome; among equals, prefer the table's own module
    return min(uses, key=lambda p: (_ACCESS_RANK[p[1].access], p[0].path != f.path, p[0].path, p[1].line))


def _expected(f: FileFacts, table: TableDef, arch: ArchSpec) -> tuple[str, str] | None:
    """(evidence, the need) when the table is about something the target lacks and an arch it
    keys has: its name says so (a multimem table), the comments beside it or the module's
    docstring do, or the module imports it (`tcgen05`). Keys such as `sm_100a` are no evidence:
    engines build portable kernels for arch-specific targets too."""
    keyed = [facts for k in table.keys if (facts := all_facts().get(k.cc)) is not None]

    def lack(needs: list[tuple[str, ...]]) -> int:
        for i, need in enumerate(needs):
            if evidence.lacking([need], arch.facts) and (not keyed or evidence.had_by(need, keyed)):
                return i
        return -1

    named, named_from = evidence.needs_with_evidence(table.name.lower())
    for needs, seen, where in (
        (named, named_from, "in the table's name"),
        (table.needs, table.needs_from, "in the comments beside it"),
        (f.needs, f.needs_from, ""),
    ):
        i = lack(needs)
        if i >= 0:
            said = seen[i] if "module" in seen[i] else f"{seen[i]} {where or 'in the module'}"
            return said, evidence.describe(needs[i])
    return None


def _blockers(uses: list[tuple[FileFacts, TableUse]], arch: ArchSpec) -> list[dict[str, Any]]:
    """Feature checks in the functions that read the table, after the read, that the target fails
    (`if handle.multicast_ptr == 0: return` on a GPU without NVLS multicast): a chain of changes."""
    out: list[dict[str, Any]] = []
    for uf, use in uses:
        for guard in uf.guards:
            lack = evidence.lacking(guard.needs, arch.facts)
            near = use.line < guard.line <= use.line + 150
            if lack and near and not any(b["line"] == guard.line and b["path"] == uf.path for b in out):
                why = f"it needs {evidence.describe(lack[0])}, which {arch.cc} lacks"
                out.append({"path": uf.path, "line": guard.line, "source": guard.source, "why": why})
    return out


def _table_finding(
    f: FileFacts, table: TableDef, arch: ArchSpec, uses: list[tuple[FileFacts, TableUse]]
) -> Finding:
    present = [k.text for k in table.keys]
    missing = key_for(table.style, arch, present)
    best = _best_use(f, uses)
    if best is None:
        access = "unknown"
        consequence = (
            f"no entry for {arch.cc}: whatever reads {table.name} by capability finds nothing for this GPU"
        )
    else:
        uf, use = best
        access = use.access
        consequence = f"{use.consequence.replace('{arch}', arch.cc)} ({uf.path}:{use.line})"
    values = {k.text: k.value for k in table.keys if k.value is not None}
    extra: dict[str, Any] = {"module": f.module, "key_style": table.style, "access": access}
    extra.update(placement(f.path))
    severity = "high" if access == "subscript" else "medium"
    expected = _expected(f, table, arch)
    if expected is not None:
        severity = "low"
        extra["evidence"], about = expected
        consequence = f"expected: {table.name} is about {about}, which {arch.cc} lacks; {consequence}"
    if extra["where"] != "runtime":
        severity = "low"  # tests, benchmarks, examples, vendored libraries: not what a server runs
    blockers = _blockers(uses, arch) if expected is None else []
    if blockers:
        extra["blockers"] = blockers
        first = blockers[0]
        consequence += (
            f"; adding the entry is not enough: {first['path']}:{first['line']} `{first['source']}` "
            f"turns it off too ({first['why']})"
        )
    if best is not None:
        extra["reads"] = [f"{uf.path}:{u.line}" for uf, u in uses if uf is not best[0] or u is not best[1]][
            :5
        ]
    if values:
        extra["values"] = values
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=table.line,
        symbol=table.symbol,
        present=tuple(present),
        missing=missing,
        consequence=consequence,
        message=f"{table.symbol} has entries for {', '.join(present)} but none for {arch.cc}: add {missing}",
        arch=arch.cc,
        source=table.source,
        extra=extra,
        # what identifies a table is its name: its values (tuned sizes) and other keys may change
        # while it still lacks the target (a one-line table's source would carry them)
        basis=f"table {table.symbol}",
    )
