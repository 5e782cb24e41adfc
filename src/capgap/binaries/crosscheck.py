"""Compare capgap's reading of a binary with `cuobjdump --list-elf` / `--list-ptx` listings.

cuobjdump spells every image `sm_XY[a|f]`: SASS `f` cubins appear as plain `sm_XY` (the two are
aliases), PTX keeps its `a`/`f` suffix, and plain PTX compute_XY appears as `sm_XY.ptx`. It lists
only loadable images (`.nv_fatbin`), not relocatable device code (`__nv_relfatbin`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from capgap.binaries.fatbin import FatbinEntry
from capgap.binaries.reader import CudaBinary

_LINE = re.compile(r"^(?P<what>ELF|PTX) file\s+\d+: .*\.(?P<arch>sm_\d+[af]?)\.(?:cubin|ptx)\s*$")


def parse_listing(text: str) -> list[tuple[str, str]]:
    """(kind, arch) per listed image, in order: ("sass", "sm_90a"), ("ptx", "sm_120")."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out.append(("sass" if m["what"] == "ELF" else "ptx", m["arch"]))
    return out


def cuobjdump_name(entry: FatbinEntry) -> str:
    suffix = "" if entry.kind == "sass" and entry.suffix == "f" else entry.suffix
    return f"sm_{entry.sm}{suffix}"


def capgap_listing(binary: CudaBinary) -> list[tuple[str, str]]:
    return [(e.kind, cuobjdump_name(e)) for e in binary.loadable]


@dataclass(frozen=True)
class ArchRow:
    kind: str
    arch: str
    cuobjdump: int
    capgap: int

    @property
    def agree(self) -> bool:
        return self.cuobjdump == self.capgap


@dataclass(frozen=True)
class Agreement:
    rows: tuple[ArchRow, ...]
    same_order: bool  # per kind, the two listings name the same arch image by image

    @property
    def agree(self) -> bool:
        return self.same_order and all(r.agree for r in self.rows)

    def to_json(self) -> dict[str, object]:
        return {
            "agree": self.agree,
            "same_order": self.same_order,
            "rows": [
                {
                    "kind": r.kind,
                    "arch": r.arch,
                    "cuobjdump": r.cuobjdump,
                    "capgap": r.capgap,
                    "agree": r.agree,
                }
                for r in self.rows
            ],
        }


def _arch_key(item: tuple[str, str]) -> tuple[bool, int, str]:
    kind, arch = item
    digits = re.sub(r"\D", "", arch)
    return kind != "sass", int(digits or 0), arch


def compare(cuobjdump: list[tuple[str, str]], capgap: list[tuple[str, str]]) -> Agreement:
    """Arch-by-arch counts of both listings (SASS then PTX), and whether the order matches too."""
    theirs, ours = Counter(cuobjdump), Counter(capgap)
    keys = sorted(set(theirs) | set(ours), key=_arch_key)
    rows = tuple(ArchRow(k, a, theirs[(k, a)], ours[(k, a)]) for k, a in keys)
    same_order = all(
        [a for k, a in cuobjdump if k == kind] == [a for k, a in capgap if k == kind]
        for kind in ("sass", "ptx")
    )
    return Agreement(rows, same_order)


def markdown(name: str, agreement: Agreement) -> str:
    lines = [
        f"### {name}: {'agree' if agreement.agree else 'DISAGREE'}"
        + ("" if agreement.same_order else " (order differs)"),
        "",
        "| kind | arch | cuobjdump | capgap | agree |",
        "|---|---|---|---|---|",
    ]
    for r in agreement.rows:
        lines.append(f"| {r.kind} | {r.arch} | {r.cuobjdump} | {r.capgap} | {'yes' if r.agree else 'NO'} |")
    return "\n".join(lines) + "\n"
