"""The source rules, judged over every file's extracted facts for each target arch.

table-missing-arch (high), gate-excludes-arch (medium / low), gate-admits-unsupported (medium),
build-missing-arch (medium). Rule ids and severities are part of the output contract.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import builds, evidence
from capgap.judging.keys import covers, key_for
from capgap.judging.records import BuildList, FileFacts, GateSite, HelperDef, TableDef, TableUse
from capgap.judging.symbolic import Context, evaluate

_ACCESS_RANK = {"subscript": 0, "get": 1, "in": 2, "try": 3}
_STRONG_STYLES = {"dotted-str", "sm-str", "tuple"}
# Names of tables that list what is refused, not what is supported (REFUSED_CAPABILITY_REASONS).
_DENY_NAME = re.compile(
    r"(?:^|_)(?:refuse[ds]?|refusals?|deny|denied|denylist|blocked|blocklist|blacklist(?:ed)?|unsupported"
    r"|not_supported|broken|skip(?:s|ped)?|exclude[ds]?|exclusions?|disallowed|banned|incompatible"
    r"|disabled?)(?:_|$)",
    re.I,
)


class Registry:
    """Cross-file lookups: helpers by name, table reads by table name."""

    def __init__(self, files: list[FileFacts]) -> None:
        self.helpers: dict[str, list[tuple[str, HelperDef]]] = defaultdict(list)
        self.uses: dict[str, list[tuple[FileFacts, TableUse]]] = defaultdict(list)
        for f in files:
            for h in f.helpers:
                self.helpers[h.name].append((f.module, h))
            for u in f.uses:
                self.uses[u.name].append((f, u))

    def helper_for(
        self, module: str, imports: dict[str, str] | None = None
    ) -> Callable[[str], HelperDef | None]:
        """Resolve a called name: what the module imported it from, else its own, else a module-level one."""
        imports = imports or {}

        def find(name: str) -> HelperDef | None:
            short = name.split(".")[-1]
            found = self.helpers.get(short)
            if not found:
                return None
            if "." not in name:  # a bare call never means a method
                found = [(m, h) for m, h in found if not h.method]
                if not found:
                    return None
            else:  # `obj.name()`: a method of that name first
                found = sorted(found, key=lambda mh: not mh[1].method)
                if found[0][1].method:
                    return next((h for m, h in found if m == module and h.method), found[0][1])
            source = imports.get(short)
            if source:
                hit = next((h for m, h in found if m == source), None) or next(
                    (h for m, h in found if m.startswith(source + ".")), None
                )
                if hit is not None:
                    return hit
            return next((h for m, h in found if m == module), found[0][1])

        return find


def _known_recent(target: ArchFacts) -> list[ArchFacts]:
    return [a for a in all_facts().values() if a.major >= 9 and a.cc != target.cc]


def _cap_key(use: TableUse, module: str, reg: Registry, imports: dict[str, str]) -> bool:
    sym = evaluate(use.key, Context(use.scope.lookup, reg.helper_for(module, imports)))
    return sym.kind in {"cap", "namecap"}


def table_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    out: list[Finding] = []
    for f in files:
        for table in f.tables:
            uses = [
                (uf, u) for uf, u in reg.uses.get(table.name, []) if _cap_key(u, uf.module, reg, uf.imports)
            ]
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
    if values:
        extra["values"] = values
    return Finding(
        rule="table-missing-arch",
        severity="high",
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
    )


def _safe(pred: Callable[[ArchFacts], bool], arch: ArchFacts) -> bool | None:
    try:
        return bool(pred(arch))
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError):
        return None


def gate_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    out: list[Finding] = []
    known = list(all_facts().values())
    for f in files:
        find_helper = reg.helper_for(f.module, f.imports)
        for gate in f.gates:
            sym = evaluate(gate.test, Context(gate.scope.lookup, find_helper))
            if sym.kind != "pred":
                continue
            pred = sym.value
            admitted = {a.cc: _safe(pred, a) for a in known}
            if any(v is None for v in admitted.values()):
                continue
            if gate.negative:
                admitted = {cc: not v for cc, v in admitted.items()}
            symbol = sym.names[0] if sym.names else ast.unparse(gate.test)[:60]
            for arch in archs:
                finding = _gate_finding(f, gate, arch, admitted, symbol)
                if finding is not None:
                    out.append(finding)
    return out


def _gate_finding(
    f: FileFacts, gate: GateSite, arch: ArchSpec, admitted: dict[str, bool | None], symbol: str
) -> Finding | None:
    target = arch.facts
    recent = [a.cc for a in _known_recent(target) if admitted[a.cc]]
    lack = evidence.lacking(gate.needs, target)
    admits = [cc for cc, ok in admitted.items() if ok and all_facts()[cc].major >= 8]
    extra: dict[str, Any] = {
        "module": f.module,
        "context": gate.context,
        "admits": admits,
        "needs": [evidence.describe(n) for n in gate.needs],
    }
    base = dict(path=f.path, line=gate.line, symbol=symbol, arch=arch.cc, source=gate.source, extra=extra)
    if not admitted[arch.cc] and recent:
        message = f"{symbol} admits {', '.join(recent)} but not {arch.cc}"
        if lack:  # rightly shut out: low, an expected gap
            need = evidence.describe(lack[0])
            severity, consequence = "low", f"expected: the guarded code needs {need}, which {arch.cc} lacks"
            message += f" (rightly: no {need})"
        else:
            instead = f"; instead it {gate.fallback}" if gate.fallback else ""
            severity, consequence = "medium", f"on {arch.cc} this path is never taken{instead}"
        return Finding(
            rule="gate-excludes-arch",
            severity=severity,
            present=tuple(recent),
            missing=arch.cc,
            consequence=consequence,
            message=message,
            **base,
        )
    # only when some other admitted arch has the need: a gate that admits just archs lacking it
    # was not written for that need (the evidence is a stray name, not the guarded code's purpose)
    lack = [n for n in lack if any(all_facts()[cc].has(f) for cc in admits if cc != arch.cc for f in n)]
    if admitted[arch.cc] and lack and not all(admitted.values()):
        need = evidence.describe(lack[0])
        return Finding(
            rule="gate-admits-unsupported",
            severity="medium",
            present=tuple(admits),
            missing=arch.cc,
            consequence=f"{arch.cc} is let into code that needs {need}, which {arch.cc} lacks: expect "
            f"'no kernel image is available' or an illegal-instruction failure",
            message=f"{symbol} admits {arch.cc}, but the guarded code needs {need}",
            **base,
        )
    return None


def build_findings(files: list[FileFacts], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    out: list[Finding] = []
    for f in files:
        for bl in f.builds:
            for arch in archs:
                cover = builds.coverage(bl.archs, arch)
                if cover == "sass":
                    continue
                if cover == "ptx":
                    consequence = (
                        f"no {arch.sm} SASS: {arch.cc} runs these kernels only by JIT-compiling PTX "
                        f"at first launch (slow start, older-arch code)"
                    )
                else:
                    consequence = (
                        f"no code for {arch.cc} is built: its kernels fail with 'no kernel image "
                        f"is available for execution on the device'"
                    )
                out.append(
                    Finding(
                        rule="build-missing-arch",
                        severity="medium",
                        path=f.path,
                        line=bl.line,
                        symbol=bl.symbol,
                        present=tuple(bl.archs),
                        missing=_build_key(bl, arch),
                        consequence=consequence,
                        message=f"{bl.symbol} lists {', '.join(bl.archs)} but not {arch.cc}",
                        arch=arch.cc,
                        source=bl.source[:200],
                        extra={"module": f.module},
                    )
                )
    return out


def _build_key(bl: BuildList, arch: ArchSpec) -> str:
    sample = bl.archs[0]
    if sample.startswith(("sm_", "compute_")):
        return f"sm_{arch.number}"
    if "." in sample:
        return arch.cc
    return str(arch.number)
