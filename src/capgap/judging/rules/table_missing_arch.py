"""table-missing-arch: a table keyed by compute capability has no entry for the target.

Severity by what the missing entry does where the table is read: high for a KeyError (an unguarded
subscript), medium for a path silently off (`.get()`, `in`, a caught KeyError), low when the
code the table keys needs a feature the target lacks and an arch it keys has (a multimem
world-size table on a GPU without NVLS multicast; tables of tcgen05 programs, or of kernels that
launch with more shared memory than the target gives a block: judging.keyed), and low when the
comments beside it say the target goes without on purpose ("RTX PRO keep the plain form", "a
capability absent from the table keeps the chunk rule"). No finding when a missing entry only
lifts a restriction (`if bound is not None and n > bound: return False`, `size = min(T[cap],
size)`: judging.tablereads). One table gives one finding per arch, at its definition, with its
reads named; a private table (`_ARCHES`) is read only by its own module.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import evidence, keyed, newer
from capgap.judging.keys import covers, key_for
from capgap.judging.records import FileFacts, TableDef, TableUse
from capgap.judging.registry import Registry
from capgap.judging.symbolic import evaluate
from capgap.judging.tablereads import LIFTED, PICKS
from capgap.judging.where import placement

RULE_ID = "table-missing-arch"
_ACCESS_RANK = {"subscript": 0, "guarded": 1, "get": 1, "in": 2, "try": 3}
_STRONG_STYLES = {"dotted-str", "sm-str", "tuple"}
_FAMILY_KEY = re.compile(r"\d{2,3}f\b", re.I)  # `sm100f`, `sm_100f`: the family
# Names of tables that list what is refused, not what is supported (REFUSED_CAPABILITY_REASONS).
_DENY_NAME = re.compile(
    r"(?:^|_)(?:refuse[ds]?|refusals?|deny|denied|denylist|blocked|blocklist|blacklist(?:ed)?|unsupported"
    r"|not_supported|broken|skip(?:s|ped)?|exclude[ds]?|exclusions?|disallowed|banned|incompatible"
    r"|disabled?)(?:_|$)",
    re.I,
)


# Names of tables of the software versions an arch requires beyond the default (unsloth's
# `_BLACKWELL_SM_MIN_TOOLKIT`): a missing entry requires nothing more, it loses nothing
_REQUIRED_VERSIONS = re.compile(
    r"(?:^|_)(?:min|minimum|required?|requires|requirements?)_?(?:[a-z0-9]+_)?"
    r"(?:toolkit|cuda|driver|nvcc|ptx|compiler|cxx|version)s?(?:_|$)",
    re.I,
)


def _cap_key(use: TableUse, f: FileFacts, reg: Registry) -> bool:
    sym = evaluate(use.key, reg.context(use.scope, f))
    return sym.kind in {"cap", "namecap"}


def findings(files: list[FileFacts], archs: tuple[ArchSpec, ...], reg: Registry) -> list[Finding]:
    out: list[Finding] = []
    importers = keyed.importers(files)
    definers: dict[str, list[str]] = {}
    for f in files:
        for name in {t.name for t in f.tables}:
            definers.setdefault(name, []).append(f.module)
    for f in files:
        found: list[tuple[TableDef, Finding]] = []
        for table in f.tables:
            others = definers[table.name]
            reads = [(uf, u) for uf, u in reg.uses.get(table.name, []) if _reads_this(f, table, uf, others)]
            if reads and all(u.effect == LIFTED for _, u in reads):
                continue  # an entry could only restrict the path (a bound, a smaller size): no gap
            uses = [(uf, u) for uf, u in reads if u.effect != LIFTED and _cap_key(u, uf, reg)]
            if not (uses or table.named_like_arch or table.style in _STRONG_STYLES):
                continue
            if _DENY_NAME.search(table.name) or any(u.denies for _, u in uses):
                continue  # a table of refusals lacking the arch refuses nothing there: no gap
            if _REQUIRED_VERSIONS.search(table.name):
                continue  # `_SM_MIN_TOOLKIT = {103: (12, 9)}`: an arch it lacks asks no more than the default
            needs = keyed.needs(f, table, importers)
            for arch in archs:
                if any(covers(table.style, k.cc, arch) for k in table.keys):
                    continue
                finding = _table_finding(f, table, arch, uses, needs)
                found.append((table, _unreached(finding, f, uses, arch, reg)))
        out.extend(_first_lookups(found))
    return out


def _unreached(
    finding: Finding, f: FileFacts, uses: list[tuple[FileFacts, TableUse]], arch: ArchSpec, reg: Registry
) -> Finding:
    """Low where every module reading the table is imported only by modules that refuse the target
    (HSTU's measured split-KV table in `_interface.py`, behind `api.py`'s "requires an SM10x GPU")."""
    if finding.severity == "low":
        return finding
    readers = list({uf.module: uf for uf, _ in uses}.values()) or [f]
    said = [reg.importers.refusal(uf, arch.facts) for uf in readers]
    if not all(said):
        return finding
    extra = {**finding.extra, "evidence": said[0]}
    consequence = f"{finding.consequence}; never reached on {arch.cc}: {said[0]}"
    return replace(finding, severity="low", extra=extra, consequence=consequence)


def _first_lookups(found: list[tuple[TableDef, Finding]]) -> list[Finding]:
    """A table keyed by what another table of its module gives (`_FLAGS = {"sm100a": ...}` beside
    `_TARGET_BY_CAPABILITY = {(10, 0): "sm100a"}`) is reached only after that lookup succeeded: on
    a target the first table lacks, it is one gap with it, judged there (issue 14: one finding per
    chain). Its own finding says so, at low; the first one names it among its blockers, as the
    other entry its fix needs."""
    out = [finding for _, finding in found]
    for i, (table, finding) in enumerate(found):
        names = {k.text.strip("\"'") for k in table.keys}
        for j, (first, head) in enumerate(found):
            given = {k.value for k in first.keys if isinstance(k.value, str)}
            if j == i or head.arch != finding.arch or not names or not names <= given:
                continue
            follows = f"{first.name} (line {first.line})"
            extra = {**finding.extra, "follows": follows}
            if "evidence" in head.extra:
                extra.setdefault("evidence", head.extra["evidence"])
            out[i] = replace(
                out[i],
                severity="low",  # one gap: the first table's finding rates it and names this one
                extra=extra,
                consequence=f"{out[i].consequence}; reached only with what {follows} gives, "
                f"which lacks {finding.arch} too: judged there, one fix with it",
            )
            also = [*out[j].extra.get("also", []), f"{table.name} (line {table.line})"]
            blocker = {
                "path": finding.path,
                "line": table.line,
                "source": table.name,
                "why": f"keyed by what {first.name} gives: it needs an entry for {finding.arch} too",
            }
            blockers = [*out[j].extra.get("blockers", []), blocker]
            out[j] = replace(
                out[j],
                extra={**out[j].extra, "also": also, "blockers": blockers},
                consequence=f"{out[j].consequence}; the fix also needs an entry in {table.name} "
                f"(line {table.line}), keyed by what this table gives",
            )
            break
    return out


def _reads_this(f: FileFacts, table: TableDef, reader: FileFacts, definers: list[str]) -> bool:
    """Is a read of `table.name` in `reader` a read of this table? In its own module, yes; in
    another, only of a public name (`_ARCHES` there is that module's own) that the reader does
    not define itself; where several modules define tables of that name
    (`SUPPORTED_COMPUTE_CAPABILITIES`), the one the reader imports it from, else the one nearest
    to it in the package tree."""
    if reader is f:
        return True
    if table.name.startswith("_") or any(t.name == table.name for t in reader.tables):
        return False
    if len(definers) < 2:
        return True
    linked = [m for m in definers if reader.imports.get(table.name) == m or m in reader.siblings]
    if linked:
        return f.module in linked
    near = {m: _shared_prefix(m, reader.module) for m in definers}
    best = max(near.values())
    return near[f.module] == best and list(near.values()).count(best) == 1  # a tie: nobody's


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        n += 1
    return n


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


def _expected(
    table: TableDef, arch: ArchSpec, needs: tuple[list[tuple[str, ...]], list[str]]
) -> tuple[str, str] | None:
    """(evidence, the need) when the code the table keys needs something the target lacks and an
    arch it keys has (judging.keyed). Keys such as `sm_100a` are no evidence: engines build
    portable kernels for arch-specific targets too."""
    archs = [facts for k in table.keys if (facts := all_facts().get(k.cc)) is not None]
    for need, seen in zip(*needs, strict=True):
        if evidence.lacking([need], arch.facts) and (not archs or evidence.had_by(need, archs)):
            return seen, evidence.describe(need)
    return None


def _blockers(uses: list[tuple[FileFacts, TableUse]], arch: ArchSpec) -> list[dict[str, Any]]:
    """Feature checks in the functions that read the table, after the read, that the target fails
    and that turn the path off by themselves (`if handle.multicast_ptr == 0: return` on a GPU
    without NVLS multicast): a chain of changes."""
    out: list[dict[str, Any]] = []
    for uf, use in uses:
        for guard in uf.guards:
            lack = evidence.lacking(guard.needs, arch.facts)
            near = use.line < guard.line and use.function and guard.function == use.function
            seen = any(b["line"] == guard.line and b["path"] == uf.path for b in out)
            if lack and near and guard.turns_off and not seen:
                why = f"it needs {evidence.describe(lack[0])}, which {arch.cc} lacks"
                out.append({"path": uf.path, "line": guard.line, "source": guard.source, "why": why})
    return out


def _newer_keys(table: TableDef, arch: ArchSpec) -> str:
    """Why a table keyed only by GPUs newer than the target is theirs ("" when it may not be; a
    key standing for a whole major, `{10: ...}`, is read as that major's GPUs)."""
    if any(not k.cc for k in table.keys):
        return ""
    keyed = {k.cc for k in table.keys}
    if table.style == "major-int" or any(_FAMILY_KEY.search(k.text) for k in table.keys):
        majors = {int(cc.split(".")[0]) for cc in keyed}
        keyed = {cc for cc, a in all_facts().items() if a.major in majors}
    return newer.written_for_newer(keyed, arch.facts)


def _one_sku(table: TableDef, arch: ArchSpec) -> str:
    """The GPUs of the one generation a table keys, absent from it ("" unless every key is a GPU of
    one other generation and one of that generation's GPUs is not keyed): `{"sm_103a": ...}` is
    B300's override, which a B200 goes without as the target does."""
    if table.style == "major-int" or any(_FAMILY_KEY.search(k.text) for k in table.keys):
        return ""  # `{10: ...}`, `"sm100f"`: keys that stand for every 10.x GPU
    majors = {int(k.cc.split(".")[0]) for k in table.keys if k.cc}
    if len(majors) != 1 or any(not k.cc for k in table.keys):
        return ""
    (major,) = majors
    if major == arch.facts.major:
        return ""
    keyed = {k.cc for k in table.keys}
    absent = [cc for cc, a in all_facts().items() if a.major == major and cc not in keyed]
    return ", ".join(absent)


def _others_special_case(table: TableDef, arch: ArchSpec) -> str:
    """The GPUs a table keys when they are a generation's own special case ("" otherwise): every key
    a GPU of a generation neither the target's nor datacenter Blackwell (10.x), which goes without
    it as the target does (`{(9, 0): "sm_90a"}`, a Thor-only `{(11, 0): ...}`): nothing the newest
    generation has is missing. Read for targets from 10.x on, as gate-excludes-arch reads paths
    only pre-Blackwell GPUs get. Not where a key is of a generation newer than the target's
    (`{(9, 0): ..., (12, 0): ...}` read on a B200): what is missing is the target's own tuning, and
    10.x going without it is the target itself."""
    if arch.facts.major < 10 or table.style == "major-int" or any(not k.cc for k in table.keys):
        return ""
    majors = {int(k.cc.split(".")[0]) for k in table.keys}
    if not majors or majors & {10, arch.facts.major} or max(majors) > arch.facts.major:
        return ""
    return ", ".join(sorted({k.cc for k in table.keys}, key=lambda cc: tuple(map(int, cc.split(".")))))


def _table_finding(
    f: FileFacts,
    table: TableDef,
    arch: ArchSpec,
    uses: list[tuple[FileFacts, TableUse]],
    needs: tuple[list[tuple[str, ...]], list[str]],
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
    expected = _expected(table, arch, needs)
    # per-arch numbers whose missing entry the comments say the target goes without on purpose
    said = keyed.documented(table, arch.facts) if expected is None and _numbers(values) else ""
    if expected is not None:
        severity = "low"
        extra["evidence"], about = expected
        consequence = f"expected: {table.name} is about {about}, which {arch.cc} lacks; {consequence}"
    elif written := _newer_keys(table, arch):
        severity = "low"  # `{(9, 0): ..., (10, 0): ...}` read on an L40S: tuned for later GPUs
        extra["evidence"] = written
        consequence = f"expected: a table {written}; {consequence}"
    elif kin := _one_sku(table, arch):
        severity = "low"
        extra["tuning"] = True
        consequence = (
            f"a per-GPU override: {kin} goes without an entry as {arch.cc} does, so what is missing is "
            f"no path of a generation; {consequence}"
        )
    elif severity == "medium" and (theirs := _others_special_case(table, arch)):
        severity = "low"  # a KeyError stays high: the read is reached there, whoever else lacks it
        extra["tuning"] = True
        consequence = (
            f"a special case of {theirs} alone: datacenter Blackwell (10.x) goes without it as "
            f"{arch.cc} does; {consequence}"
        )
    elif best is not None and all(u.effect == PICKS for _, u in uses):
        # `use_oneshot=nbytes <= self._one_shot_max_size`: one-shot or two-shot, both run
        severity = "low"
        extra["tuning"] = True
        consequence = f"tuning only: {consequence}; worth measuring on {arch.cc}"
    elif said:
        severity = "low"
        extra["evidence"] = f"the comment beside it: '{said}'"
        extra["tuning"] = True
        consequence = f"left out on purpose, the comment beside it says: '{said}'; {consequence}"
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


def _numbers(values: dict[str, Any]) -> bool:
    """Are the entries per-arch numbers (tuning), nested or not?"""

    def number(v: Any) -> bool:
        if isinstance(v, dict):
            return bool(v) and all(number(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return bool(v) and all(number(x) for x in v)
        return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))

    return bool(values) and all(number(v) for v in values.values())
