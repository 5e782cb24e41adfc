"""What the code a capability table keys evidently needs, and what its authors wrote about an
arch it leaves out: the evidence `rules.table_missing_arch` judges a missing entry by.

The needs are the ones the gate rule reads for a decision's paths, taken where a table's keyed
code is: the table's name and the comments beside it (judging.remarks); the feature words its
values spell (`"mnnvl_moe_alltoall_sm100.cu"`: MNNVL; an arch number in a value names the build,
not what it needs), or those of a table of the same keys in its module (the flags of those
sources); the module's own needs (its imports, docstring, path, the stated shared memory
of its kernels, the `.cu` sources or source directory it names, what the sibling modules it
imports need: reading.native); the kernel family its path is named after (`deepgemm_dense_mqa/`);
and, for a module with none of its own, what every module of its package that imports it needs
(`decode_table.py`, whose tables only `cake_backend.py` reads).
"""

from __future__ import annotations

import re
from collections import defaultdict

from capgap.arch import ArchFacts
from capgap.judging import evidence
from capgap.judging.records import FileFacts, TableDef

Need = tuple[str, ...]
# An arch number in a value or a path names which build, not what it needs (`_sm100.cu`).
ARCH_NUMBER = re.compile(r"sm_?\d+[a-z]?|sm\d+x")
# Path words that name a kernel family whose code needs an MMA generation (DeepGEMM, FlashMLA,
# TRT-LLM-gen) or a fabric (MNNVL, NVLS): what the module's own words read by evidence.NEEDS say.
_FAMILY_NEEDS = {("wgmma", "tcgen05"), ("tcgen05",), ("wgmma",), ("nvls_multicast",), ("nvswitch",)}


def importers(files: list[FileFacts]) -> dict[str, list[FileFacts]]:
    """Module -> the modules of its own package that import it (`from .decode_table import ...`),
    a package's `__init__` (which re-exports) left out."""
    out: dict[str, list[FileFacts]] = defaultdict(list)
    for f in files:
        if f.path.endswith("__init__.py"):
            continue
        package = f.module.rpartition(".")[0]
        for sibling in f.siblings:
            if sibling.rpartition(".")[0] == package and sibling != f.module:
                out[sibling].append(f)
    return out


def needs(
    f: FileFacts, table: TableDef, importers_of: dict[str, list[FileFacts]]
) -> tuple[list[Need], list[str]]:
    """What the keyed code needs, strongest evidence first, each with what it was read from."""
    found: list[Need] = []
    where: list[str] = []

    def add(pairs: list[tuple[Need, str]]) -> None:
        for need, seen in pairs:
            if need not in found:
                found.append(need)
                where.append(seen)

    named, named_from = evidence.needs_with_evidence(table.name.lower())
    add([(n, f"{w} in the table's name") for n, w in zip(named, named_from, strict=True)])
    add([(n, f"{w} in the comments beside it") for n, w in zip(table.needs, table.needs_from, strict=True)])
    add(_worded(table, "its values"))
    keys = {k.text for k in table.keys}
    for other in f.tables:  # a table of the same keys beside it keys the same code (flags, sources)
        if other is not table and {k.text for k in other.keys} == keys:
            add(_worded(other, f"the values of {other.name} (line {other.line}), keyed alike"))
    own = zip(f.needs, f.needs_from, strict=True)
    add([(n, w if "module" in w or " in " in w else f"{w} in the module") for n, w in own])
    if not f.kernels:  # (kernel code of its own was read: what it needs is in f.needs)
        pathed, pathed_from = evidence.needs_with_evidence(ARCH_NUMBER.sub(" ", f.path.lower()))
        path = zip(pathed, pathed_from, strict=True)
        add([(n, f"{w} in the module's path") for n, w in path if n in _FAMILY_NEEDS])
        add(_importers_need(importers_of.get(f.module, [])))
    return found, where


def _worded(table: TableDef, where: str) -> list[tuple[Need, str]]:
    """The feature words a table's string values spell (`"mnnvl_moe_alltoall_sm100.cu"`)."""
    values = " ".join(k.value for k in table.keys if isinstance(k.value, str))
    needs, seen = evidence.needs_with_evidence(ARCH_NUMBER.sub(" ", values.lower()))
    return [(n, f"{w} in {where}") for n, w in zip(needs, seen, strict=True)]


def _importers_need(readers: list[FileFacts]) -> list[tuple[Need, str]]:
    """The needs every importer of the module shares (none when one needs nothing)."""
    if not readers:
        return []
    shared = [n for n in readers[0].needs if all(n in r.needs for r in readers[1:])]
    out: list[tuple[Need, str]] = []
    for need in shared:
        first = readers[0]
        seen = first.needs_from[first.needs.index(need)]
        names = ", ".join(r.path.rsplit("/", 1)[-1] for r in readers[:3])
        out.append((need, f"{seen} in {first.path}, which imports it (read by {names})"))
    return out


# What a target is called in words: `SM120`, `sm_120a`, `SM12x`, `12.0`, `12.x`, `RTX PRO`,
# `RTX 5090`, `GB10`, `DGX Spark`.
def target_words(arch: ArchFacts) -> re.Pattern[str]:
    words = [
        rf"sm_?{arch.number}[af]?",
        rf"sm_?{arch.major}x",
        rf"{arch.major}\.{arch.minor}(?!\d)",
        rf"{arch.major}\.x",
        rf"compute capability {arch.major}(?:\.{arch.minor})?(?![\d.])",
    ]
    for product in arch.products:
        name = re.sub(r"\s*\(.*?\)|^(?:NVIDIA|GeForce)\s+", "", product)
        inner = re.search(r"\((.*?)\)", product)
        for said in {name, " ".join(name.split()[:2]), inner[1] if inner else ""}:
            if said and re.search(r"\d| PRO", said):
                words.append(re.escape(said).replace(r"\ ", r"[\s-]?"))
    return re.compile(r"(?<![\w.])(?:" + "|".join(words) + r")(?![\w])", re.I)


# A sentence that says the target goes without: "SM120 has no block-sparse kernel", "RTX PRO keep
# the plain form", "16 heads exceed SM120's 100 KB"; not one that says the entry is still to come
# ("not measured yet").
_WITHOUT = re.compile(
    r"\b(?:no|not|lacks?|lacking|without|keeps?|kept|stays?|falls? back|fallback|excluded?|unsupported"
    r"|cannot|can't|doesn't|does not|never|instead|exceeds?)\b"
    # "need 128 KB of shared memory, more than sm_120 / sm_89 have"
    r"|\bmore than\b[^.;]{0,60}\bha(?:s|ve)\b",
    re.I,
)
_NOT_YET = re.compile(
    r"\b(?:todo|fixme|tbd|yet|untested|unmeasured|pending|not (?:been )?(?:measured|tuned|tested|validated|"
    r"benchmarked|profiled))\b",
    re.I,
)
# A sentence that says what a missing key does: "A capability absent from the table keeps the chunk rule."
_ABSENT = re.compile(
    r"\b(?:absent|missing|unlisted|not listed|not in (?:the|this) (?:table|map|dict)"
    r"|(?:any |every |all )?other (?:capabilit(?:y|ies)|archs?|architectures?|gpus?|devices?))\b",
    re.I,
)
_KEEPS = re.compile(r"\b(?:keeps?|kept|default|falls? back|fallback|uses?|takes?|stays?|gets?|runs?)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n\s*\n")


def documented(table: TableDef, arch: ArchFacts) -> str:
    """The sentence beside the table that says the target goes without, or what a capability
    missing from it gets ("" when there is none): the authors left the entry out on purpose."""
    if not table.remark:
        return ""
    prose = " ".join(line.lstrip("#").strip() for line in table.remark.split("\n"))
    for sentence in _SENTENCE.split(prose):
        if _NOT_YET.search(sentence):
            continue
        if goes_without([sentence], arch) or (_ABSENT.search(sentence) and _KEEPS.search(sentence)):
            return sentence.strip()
    return ""


def goes_without(sentences: list[str], arch: ArchFacts) -> str:
    """The first of `sentences` that names the target and says it goes without ("Architectures with
    only fa2 (e.g. SM89, SM120) cannot consume FP8 queries"; not "SM120 is not validated yet")."""
    named = target_words(arch)
    for sentence in sentences:
        if not _NOT_YET.search(sentence) and named.search(sentence) and _WITHOUT.search(sentence):
            return sentence.strip()
    return ""
