"""The native sources a Python module compiles, read for what they need.

A JIT module names the `.cu` / `.cuh` files it builds (`"cake_kda_decode_kernel.cu"`,
f"cake_lm_head_loss/{unit}_kernel.cu"); whether they issue tcgen05, UMMA, TMEM, wgmma or
multimem instructions says whether leaving an arch out of the module's tables is expected. The
files are found in the target by name (a `{...}` part matches anything), a sample of them read
bounded; a need counts when at least half of them spell it.
"""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from collections.abc import Iterable

from capgap import boundedread
from capgap.judging import evidence
from capgap.judging.records import FileFacts

NATIVE_SUFFIXES = (".cu", ".cuh")
_MAX_SOURCES = 12  # sources read per module: a family of generated kernels says it in a few
_MAX_BYTES = 4 << 20
# What a source must spell to show an arch-specific need (library names are not enough here).
_NATIVE_NEEDS = re.compile(r"tcgen05|\bumma\b|\btmem\b|tmem_|wgmma|warpgroup|multimem", re.I)
# The literal (lowercase) each of its alternatives starts at: a match begins where one is found.
_NEED_LITERALS = (b"tcgen05", b"umma", b"tmem", b"wgmma", b"warpgroup", b"multimem")
# Each spelling's feature (`TMEM_NCOLS`: the `tmem_` spelling, which the name readers of
# `evidence` do not take for TMEM, so the mapping is direct).
_NATIVE_FEATURE: dict[str, tuple[str, ...]] = {
    "tcgen05": ("tcgen05",),
    "umma": ("tcgen05",),
    "tmem": ("tcgen05",),
    "wgmma": ("wgmma",),
    "warpgroup": ("wgmma",),
    "multimem": ("nvls_multicast",),
}


def index(paths: Iterable[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Native sources of a target by file name: name -> [(relative path, path)]."""
    by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel, path in paths:
        if rel.endswith(NATIVE_SUFFIXES):
            by_name[rel.rsplit("/", 1)[-1]].append((rel, path))
    return by_name


def add_needs(files: list[FileFacts], by_name: dict[str, list[tuple[str, str]]]) -> None:
    """Give each module the needs most of the native sources it names spell (kernel sources
    first, a sample of them), and a module with none of its own those of the sibling modules it
    imports (`cake_backend.py` importing `cake_jit.py`, which names the sources or states them)."""
    seen: dict[str, tuple[list[tuple[str, ...]], list[str]]] = {}
    own: dict[str, tuple[list[tuple[str, ...]], list[str]]] = {}
    for f in files:
        found = _sample([hit for pattern in f.sources for hit in _resolve(pattern, by_name)])
        if not found:
            continue
        counts: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for rel, path in found:
            if rel not in seen:
                seen[rel] = _needs_of(rel, path)
            for need, where in zip(*seen[rel], strict=True):
                counts[need].append(where)
        needs = [n for n, wheres in counts.items() if 2 * len(wheres) >= len(found)]
        where = [f"{counts[n][0]} ({len(counts[n])} of {len(found)} sources it names)" for n in needs]
        own[f.module] = (needs, where)
        _give(f, needs, where)
        f.kernels = f.kernels or f"{len(found)} of the sources it names ({found[0][0]}, ...)"
    # what a module states or imports it needs passes to its siblings as what its sources spell does
    own.update({f.module: (f.needs, f.needs_from) for f in files if f.needs and f.module not in own})
    kernels = {f.module: f.kernels for f in files if f.kernels}
    for f in files:
        if f.module in own:
            continue
        package = f.module.rpartition(".")[0]
        for source in dict.fromkeys([*f.imports.values(), *f.siblings]):
            # a module of its own package, or the one a subpackage keeps for it (`gated_act.py`
            # importing `jit.gated_act`): what another package's modules compile is not its path
            if not (source.rpartition(".")[0] == package or _named_for(source, f.module, package)):
                continue
            if source in own:
                needs, where = own[source]
                _give(f, needs, [f"{w}, via {source}" for w in where])
            if not f.kernels and source in kernels and _named_for(source, f.module, package):
                f.kernels = f"{kernels[source]}, via {source}"


def _named_for(source: str, module: str, package: str) -> bool:
    """Is `source` a module of a subpackage named after `module` (its JIT or kernel module)?"""
    stem, name = module.rpartition(".")[2], source.rpartition(".")[2]
    return (
        source.startswith(package + ".")
        and min(len(stem), len(name)) >= 5
        and (name.startswith(stem) or stem.startswith(name))
    )


def add_build_needs(files: list[FileFacts], by_name: dict[str, list[tuple[str, str]]]) -> None:
    """Give each build list that names its sources (CMake) the needs most of them spell, in their
    names (`scaled_mm_c3x_sm90.cu`) or their text (tcgen05, wgmma, ...)."""
    for f in files:
        for bl in f.builds:
            if not bl.sources:
                continue
            counts: dict[tuple[str, ...], list[str]] = defaultdict(list)
            for name in bl.sources:
                named, where = evidence.needs_with_evidence(name.rsplit("/", 1)[-1].lower())
                hits = [hit for hit in _resolve(name, by_name)][:1]
                text_needs, text_where = _needs_of(*hits[0]) if hits else ([], [])
                seen = dict(zip(named, (f"{w} in the name {name}" for w in where), strict=True))
                for need, w in zip(text_needs, text_where, strict=True):
                    seen.setdefault(need, w)
                for need, w in seen.items():
                    counts[need].append(w)
            for need, wheres in counts.items():
                if 2 * len(wheres) >= len(bl.sources) and need not in bl.needs:
                    bl.needs.append(need)
                    bl.needs_from.append(f"{wheres[0]} ({len(wheres)} of {len(bl.sources)} sources it sets)")


def _give(f: FileFacts, needs: list[tuple[str, ...]], where: list[str]) -> None:
    for need, seen in zip(needs, where, strict=True):
        if need not in f.needs:
            f.needs.append(need)
            f.needs_from.append(seen)


def _sample(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """At most _MAX_SOURCES distinct sources, kernels before bindings and headers."""
    unique = list(dict.fromkeys(found))
    unique.sort(key=lambda hit: ("kernel" not in hit[0].rsplit("/", 1)[-1], hit[0]))
    return unique[:_MAX_SOURCES]


def _resolve(pattern: str, by_name: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    name = pattern.rsplit("/", 1)[-1]
    if "*" not in name:
        hits = by_name.get(name, [])
    else:
        hits = [hit for key, found in by_name.items() if fnmatch.fnmatchcase(key, name) for hit in found]
    if "/" in pattern:  # a relative path narrows the name to its directory
        tail = pattern.lstrip("./")
        narrowed = [h for h in hits if fnmatch.fnmatchcase(h[0], "*" + tail)]
        hits = narrowed or hits
    return hits


def _needs_of(rel: str, path: str) -> tuple[list[tuple[str, ...]], list[str]]:
    try:
        data = boundedread.read_regular(path, _MAX_BYTES)
    except (OSError, boundedread.TooLarge):
        return [], []
    hit = first_need(data)
    if hit is None:
        return [], []
    return [_NATIVE_FEATURE[hit[0].lower().rstrip("_")]], [f"'{hit[0]}' in {rel}"]


def first_need(data: bytes) -> re.Match[str] | None:
    """`_NATIVE_NEEDS.search` over the source's text (decoded with replacement), found faster: the
    case-insensitive regex tries every position of a 4 MB source (~6 ms a file); here `find`
    jumps between the places one of its literals starts at (in the bytes, ASCII lowercased), and
    the regex is matched on the text only there. The same answer: the regex matches ASCII letters
    only, but for the dotless i and the dotted I, which send the search to the regex itself."""
    ascii_only = data.isascii()
    if not ascii_only and (b"\xc4\xb0" in data or b"\xc4\xb1" in data):  # U+0130, U+0131 in UTF-8
        return _NATIVE_NEEDS.search(data.decode("utf-8", "replace"))
    low = data.lower()
    next_at = {lit: low.find(lit) for lit in _NEED_LITERALS}
    text: str | None = None
    while True:
        found = [i for i in next_at.values() if i >= 0]
        if not found:
            return None
        i = min(found)
        if text is None:
            text = data.decode("utf-8", "replace")
        # an ASCII byte ends any broken sequence before it: the prefix decodes as the text begins
        at = i if ascii_only else len(data[:i].decode("utf-8", "replace"))
        hit = _NATIVE_NEEDS.match(text, at)
        if hit is not None:
            return hit
        for lit, pos in next_at.items():  # none matched at i: each literal found there looks further
            if pos == i:
                next_at[lit] = low.find(lit, i + 1)
