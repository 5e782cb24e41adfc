"""The native sources a Python module compiles, read for what they need.

A JIT module names the `.cu` / `.cuh` files it builds (`"cake_kda_decode_kernel.cu"`,
f"cake_lm_head_loss/{unit}_kernel.cu"); whether they issue tcgen05, UMMA, TMEM, wgmma or
multimem instructions says whether leaving an arch out of the module's tables is expected. The
files are found in the target by name (a `{...}` part matches anything; a glob only in the
directories the module's plain names lead to), a sample of them read bounded with the local headers
each includes (`#include "x.cuh"`, one level); a need counts when at least half of them spell it,
the thin launchers (`*_binding.cu`) left out of the count when kernel sources are named too. A
module whose named sources are only launchers (the kernel bodies picked at run time from a registry)
is judged by the directory they live in, when that directory is its own (a `csrc/<family>/`, not the
csrc root): the need counts when at least half of the sources under it spell it.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable

from capgap import boundedread
from capgap.judging import evidence, native_words
from capgap.judging.records import FileFacts
from capgap.reading.hintlines import holds_any, lines_holding

NATIVE_SUFFIXES = (".cu", ".cuh", ".ptx")  # (retained PTX programs spell their instructions too)
_MAX_SOURCES = 12  # sources read per module: a family of generated kernels says it in a few
_MAX_KERNELS = 48  # kernel sources read per module, when it names more than _MAX_SOURCES of them
_MAX_BYTES = 4 << 20
# A need counts when this share of the kernels a module compiles spell it: one op's pipeline (its
# tcgen05 GEMM stages beside the top-k and scheduling kernels that feed them) needs what its
# heaviest stages need.
_SHARE = 4  # 1 in _SHARE
_MAX_INCLUDES = 6  # local headers followed per source
_MAX_DIR_SOURCES = 400  # a directory with more sources than this is a tree's csrc root, not a family's
_MAX_DIR_READS = 48  # sources read of a family's directory, evenly over its sorted names
_LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
# A thin launcher: what it runs lives in a kernel source (`x_binding.cu`, `x_jit_binding.cu`, `x_ops.cu`).
_LAUNCHER = re.compile(r"(?:^|_)(?:bindings?|pybind|ops|api|launch|launcher)(?:_common)?\.cuh?$")


def _launcher(rel: str) -> bool:
    """Is the source, by its file name, a launcher or binding (`..._binding.cu`), not a kernel?"""
    return _LAUNCHER.search(rel.rsplit("/", 1)[-1]) is not None


def index(paths: Iterable[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Native sources of a target by file name: name -> [(relative path, path)]."""
    by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel, path in paths:
        if rel.endswith(NATIVE_SUFFIXES):
            by_name[rel.rsplit("/", 1)[-1]].append((rel, path))
    return by_name


def add_needs(files: list[FileFacts], by_name: dict[str, list[tuple[str, str]]]) -> None:
    """Give each module the needs most of the native sources it names spell (kernel sources
    first, a sample of them, with the local headers they include), or, where it names only
    launchers, most of the sources of the directory they live in; and a module with none of its
    own those of the sibling modules it imports (`cake_backend.py` importing `cake_jit.py`, which
    names the sources or states them)."""
    reader = _Reader(by_name)
    own: dict[str, tuple[list[tuple[str, ...]], list[str]]] = {}
    for f in files:
        hits = _module_hits([s for s in f.sources if not s.endswith("/")], by_name)
        found = _sample(hits)
        if found and not any(rel.endswith(".cu") for rel, _ in hits) and _own_csrc(f):
            # headers alone (`"flashinfer" / "layout.cuh"`, a check that the include tree is
            # there) beside the `csrc/` its package ships: that directory holds its kernels
            found = []
        if not found:
            # a module that names only the directory of its sources (`csrc/gdn/cake/manifest.json`)
            named = _named_dirs(f)
            homes = [home for s in named if (home := reader.directory(s))]
            if homes:
                needs, where = reader.directory_needs(homes[0])
                _give(f, needs, where)
                own[f.module] = (list(f.needs), list(f.needs_from))
            continue
        kernels = [hit for hit in found if not _launcher(hit[0])]
        # a shared header (`include/layout.cuh`) beside kernel sources is not one of them
        kernels = [hit for hit in kernels if hit[0].endswith(".cu")] or kernels
        counted = kernels or found
        counts: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for rel, path in counted:
            # a launcher's kernels are in what it includes; a kernel source's own includes are
            # shared dispatch headers that name every arch
            follow = not kernels
            for need, where in zip(*reader.needs_of(rel, path, follow), strict=True):
                counts[need].append(where)
        needs = [n for n, wheres in counts.items() if _SHARE * len(wheres) >= len(counted)]
        where = [f"{counts[n][0]} ({len(counts[n])} of {len(counted)} sources it names)" for n in needs]
        # a header it names (`..._contract.cuh`, `..._generated_manifest.cuh`) is no kernel source
        named_kernels = sum(1 for hit in hits if hit[0].endswith(".cu") and not _launcher(hit[0]))
        if not needs and 2 * named_kernels < len(hits):
            # mostly launchers: the kernels they run are picked elsewhere (a registry), from the
            # family's directory
            home = _home(hits, reader)
            stems = _launched_stems(hits)
            beside = posixpath.commonpath([rel.rpartition("/")[0] or "." for rel, _ in hits])
            if stems and beside not in ("", "."):
                # `x_binding.cuh` launches the `x_*.cu` kernels beside it: those first
                needs, where = reader.directory_needs(beside, stems)
            if home and not needs:
                needs, where = reader.directory_needs(home)
        _give(f, needs, where)
        own[f.module] = (list(f.needs), list(f.needs_from))  # what it states or imports too
        if named_kernels == 0 and _unshipped(f.sources, by_name):
            # `cake_jit.py` names generated `*_kernel.cu` files the wheel does not ship and a shared
            # header it does (`layout.cuh`): its kernels were not read, so they are not said to
            # need nothing (what its importers state still counts: judging.keyed)
            continue
        f.kernels = f.kernels or f"{len(found)} of the sources it names ({found[0][0]}, ...)"
    # what a module states or imports it needs passes to its siblings as what its sources spell does
    own.update({f.module: (f.needs, f.needs_from) for f in files if f.needs and f.module not in own})
    kernels_of = {f.module: f.kernels for f in files if f.kernels}
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
            if not f.kernels and source in kernels_of and _named_for(source, f.module, package):
                f.kernels = f"{kernels_of[source]}, via {source}"


class _Reader:
    """What native sources spell, each file read once, bounded."""

    def __init__(self, by_name: dict[str, list[tuple[str, str]]]) -> None:
        self.by_name = by_name
        self.spelled: dict[str, tuple[str, str] | None] = {}  # rel -> (its first need word, rel)
        self.smem: dict[str, tuple[str, int]] = {}  # rel -> the largest shared memory it states
        self.smem_read: set[str] = set()
        self.includes: dict[str, list[tuple[str, str]]] = {}
        self.dirs: dict[str, tuple[list[tuple[str, ...]], list[str]]] = {}
        self._sorted: list[tuple[str, str]] | None = None
        self._dirs: set[str] | None = None

    def directory(self, named: str) -> str:
        """The family directory a module names (`gdn/cake/`): the one of the tree whose path
        ends so, under a `csrc/` first, when it holds sources and is no tree's root."""
        if self._dirs is None:
            self._dirs = {
                parent
                for found in self.by_name.values()
                for rel, _ in found
                for parent in _parents(rel.rpartition("/")[0])
            }
        tail = named.strip("/")
        ends = sorted(d for d in self._dirs if d == tail or d.endswith("/" + tail))
        home = next((d for d in ends if d.endswith("csrc/" + tail)), ends[0] if len(ends) == 1 else "")
        return home if home and 0 < len(self.under(home)) <= _MAX_DIR_SOURCES else ""

    def under(self, home: str) -> list[tuple[str, str]]:
        """The sources below directory `home`, by name."""
        if self._sorted is None:
            self._sorted = sorted(hit for found in self.by_name.values() for hit in found)
        prefix = home + "/"
        lo = bisect.bisect_left(self._sorted, (prefix, ""))
        hi = bisect.bisect_left(self._sorted, (home + "0", ""))  # "0" follows "/"
        return self._sorted[lo:hi]

    def _read(
        self, rel: str, path: str, *, includes: bool = False, smem: bool = False
    ) -> tuple[str, str] | None:
        """The first need word the source spells; and, when asked, the local headers it includes
        and the shared memory it states (read once each: a family's directory needs neither)."""
        known = rel in self.spelled
        more_includes = includes and rel not in self.includes
        more_smem = smem and rel not in self.smem_read
        if known and not more_includes and not more_smem:
            return self.spelled[rel]
        data = _head(path)
        low = data.lower() if not known or more_smem else b""
        if not known:
            self.spelled[rel] = _spelled(data, rel, low)
        if more_includes:
            self.includes[rel] = _local_includes(data, rel, path)
        if more_smem:
            self.smem_read.add(rel)
            stated = _smem_stated(data, low)
            if stated is not None:
                self.smem[rel] = stated
        return self.spelled[rel]

    def needs_of(self, rel: str, path: str, follow: bool) -> tuple[list[tuple[str, ...]], list[str]]:
        """What the source spells, or else (`follow`) one of the local headers it includes."""
        hit = self._read(rel, path, includes=follow, smem=True)
        if hit is None and follow:
            for inc_rel, inc_path in self.includes.get(rel, []):
                got = self._read(inc_rel, inc_path)
                if got is not None:
                    hit = (got[0], f"{got[1]} (included by {rel})")
                    break
        needs, wheres = (
            ([native_words.feature(hit[0])], [f"'{hit[0]}' in {hit[1]}"]) if hit is not None else ([], [])
        )
        if rel in self.smem:
            name, nbytes = self.smem[rel]
            need = evidence.smem_need(nbytes)
            if need is not None:
                needs.append(need)
                wheres.append(f"'{name} {nbytes}' in {rel}")
        return needs, wheres

    def directory_needs(
        self, home: str, stems: tuple[str, ...] = ()
    ) -> tuple[list[tuple[str, ...]], list[str]]:
        """The needs at least half the kernel sources under `home` spell (read evenly, at most
        _MAX_DIR_READS of them); with `stems`, of those whose names start with one of them only
        (`cake_flashkda_blackwell_evolution_` for the kernels its binding launches)."""
        key = home + "|" + ",".join(stems)
        if key in self.dirs:
            return self.dirs[key]
        under = self.under(home)
        if stems:
            under = [h for h in under if h[0].rpartition("/")[2].startswith(stems) and not _launcher(h[0])]
        kernels = [h for h in under if not _launcher(h[0])]
        if kernels and 2 * len(kernels) <= len(under):
            # a generated `<hash>_binding.cu` beside each `<hash>_kernel.cu`: the launchers would
            # outvote what the kernels spell; the kernels are what the family needs
            under = kernels
        step = max(1, -(-len(under) // _MAX_DIR_READS))
        read = under[::step]
        counts: dict[str, int] = defaultdict(int)  # the word as most sources spell it
        for rel, path in read:
            got = self._read(rel, path)
            if got is not None:
                counts[got[0]] += 1
        by_need: dict[tuple[str, ...], int] = defaultdict(int)
        for word, n in counts.items():
            by_need[native_words.feature(word)] += n
        needs: list[tuple[str, ...]] = []
        where: list[str] = []
        for need, n in by_need.items():
            if read and 2 * n >= len(read):
                word = max((w for w in counts if native_words.feature(w) == need), key=counts.__getitem__)
                needs.append(need)
                of = f"{n} of {len(read)} sources" + (
                    f" read of {len(under)}" if len(read) < len(under) else ""
                )
                named = f"{home}/{stems[0]}*" if stems else f"{home}/"
                where.append(f"'{word}' in {of} under {named}")
        self.dirs[key] = (needs, where)
        return needs, where


def _spelled(data: bytes, rel: str, low: bytes | None = None) -> tuple[str, str] | None:
    """The first need word the source spells (found by plain byte searches first: most sources
    spell none, and a case-folding regular expression over megabytes is slow)."""
    low = data.lower() if low is None else low
    for words, pattern in native_words.TIERS:
        if not holds_any(low, words):
            continue
        # every match starts with one of the words: the regex is tried from the first of them on
        first = min((at for word in words if (at := low.find(word.encode())) != -1), default=-1)
        hit = pattern.search(low, first) if first != -1 else None
        if hit is not None:
            return data[hit.start() : hit.end()].decode("ascii", "replace"), rel  # as the source spells it
    return None


# The shared memory a kernel source gives its blocks: `#define SMEM_TOTAL 221696`, `constexpr int
# kSmemBytes = 98304;`, `cudaFuncAttributeMaxDynamicSharedMemorySize, 232448` (not a device's limit).
_SMEM_DEFINE = re.compile(
    rb"(?:#[ \t]*define[ \t]+|constexpr[ \t]+[\w:]+[ \t]+)(\w*(?:smem|shared_?mem)\w*)[ \t=]+\(?(\d{4,7})\b"
    rb"|MaxDynamicSharedMemorySize[ \t]*,[ \t]*(\d{4,7})\b",
    re.I,
)
_SMEM_LIMIT = re.compile(rb"max|limit|cap|avail|per_?sm|budget", re.I)
_SMEM_SIZE = re.compile(rb"bytes|size|total", re.I)


_SMEM_WORDS = (b"smem", b"shared_mem", b"sharedmem")


def _smem_stated(data: bytes, low: bytes) -> tuple[str, int] | None:
    """The largest shared memory per block the source states for a kernel, and its name, searched
    on the lines that spell one of _SMEM_WORDS (`low`: the lowercased source, line for line)."""
    best: tuple[str, int] | None = None
    for word in _SMEM_WORDS:
        for start, end in lines_holding(low, word):
            for hit in _SMEM_DEFINE.finditer(data, start, end):
                if hit[3] is not None:
                    name, value = "MaxDynamicSharedMemorySize", int(hit[3])
                elif _SMEM_SIZE.search(hit[1]) and not _SMEM_LIMIT.search(hit[1]):
                    name, value = hit[1].decode("ascii", "replace"), int(hit[2])
                else:
                    continue
                if best is None or value > best[1]:
                    best = (name, value)
    return best


def _local_includes(data: bytes, rel: str, path: str) -> list[tuple[str, str]]:
    """The `#include "x"` headers of a source that lie beside it or below it in the tree (the
    path as written, from the source's own directory), at most _MAX_INCLUDES of them."""
    if b"#" not in data:
        return []
    base = path[: len(path) - len(rel)]
    here = rel.rpartition("/")[0]
    # the source's own directory, then the two above it (a family's `-I csrc/<family>`)
    dirs = [here, posixpath.dirname(here), posixpath.dirname(posixpath.dirname(here))]
    out: list[tuple[str, str]] = []
    for hit in _LOCAL_INCLUDE.finditer(data):
        name = hit[1].decode("utf-8", "replace")
        if posixpath.isabs(name):
            continue
        for d in dict.fromkeys(dirs):
            joined = posixpath.normpath(posixpath.join(d, name))
            if joined.startswith("../") or joined == ".." or not os.path.isfile(base + joined):
                continue
            out.append((joined, base + joined))
            break
        if len(out) >= _MAX_INCLUDES:
            break
    return out


def _named_dirs(f: FileFacts) -> list[str]:
    """The source directories a module with tables or decisions names (`gdn/cake/`)."""
    return [s for s in f.sources if s.endswith("/")] if f.tables or f.decisions else []


def _own_csrc(f: FileFacts) -> bool:
    """Does the module name the `csrc/` directory beside it (its package's own sources)?"""
    return f.path.rpartition("/")[0] + "/csrc/" in _named_dirs(f)


def _unshipped(sources: list[str], by_name: dict[str, list[tuple[str, str]]]) -> bool:
    """Does the module name a `.cu` source (no glob) that is nowhere in the tree?"""
    return any(s.endswith(".cu") and "*" not in s and not _resolve(s, by_name) for s in sources)


def _module_hits(patterns: list[str], by_name: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The sources a module's names resolve to: plain names anywhere (narrowed by their path), a
    glob only in the directories the plain names lead to when there are any (`f"{ident}_binding.cu"`
    is the module's own launcher, not every launcher of the tree)."""
    plain = [hit for p in patterns if "*" not in p.rsplit("/", 1)[-1] for hit in _resolve(p, by_name)]
    dirs = {rel.rpartition("/")[0] for rel, _ in plain}
    hits = list(plain)
    for p in patterns:
        if "*" not in p.rsplit("/", 1)[-1]:
            continue
        found = _resolve(p, by_name)
        if dirs and "/" not in p:  # a path of its own narrows the glob already
            found = [hit for hit in found if hit[0].rpartition("/")[0] in dirs]
        hits += found
    return hits


def _parents(directory: str) -> Iterable[str]:
    while directory:
        yield directory
        directory = directory.rpartition("/")[0]


def _launched_stems(hits: list[tuple[str, str]]) -> tuple[str, ...]:
    """What the launchers a module names call their kernels (`cake_flashkda_blackwell_evolution_`
    for `cake_flashkda_blackwell_evolution_binding.cuh`); long stems only (`_binding.cu` alone
    names no family)."""
    stems = []
    for rel, _ in hits:
        name = rel.rpartition("/")[2]
        hit = _LAUNCHER.search(name)
        if hit is not None and hit.start() >= _MIN_STEM and "common" not in hit[0]:
            stems.append(name[: hit.start()] + "_")
    return tuple(dict.fromkeys(stems))


_MIN_STEM = 8


def _home(hits: list[tuple[str, str]], reader: _Reader) -> str:
    """The directory all of a module's sources live in, when it is a family's own: not the root,
    and holding at most _MAX_DIR_SOURCES sources (a csrc root holds thousands). A directory of
    launchers alone (`csrc/attn/jit/`) stands for the family directory above it."""
    home = posixpath.commonpath([rel.rpartition("/")[0] or "." for rel, _ in hits])
    while home not in ("", ".") and all(_launcher(rel) for rel, _ in reader.under(home)):
        home = posixpath.dirname(home)
    if home in ("", ".") or not reader.under(home):
        return ""
    return home if len(reader.under(home)) <= _MAX_DIR_SOURCES else ""


def _named_for(source: str, module: str, package: str) -> bool:
    """Is `source` a module of a subpackage named after `module` (its JIT or kernel module), or a
    module of the same name elsewhere in its top package (`gdn_kernels/blackwell/cake_gdn_cp_backend`
    importing `jit.cake_gdn_cp_backend`, the registry that builds its kernels)?"""
    stem, name = module.rpartition(".")[2], source.rpartition(".")[2]
    if min(len(stem), len(name)) < 5:
        return False
    if name == stem and "_" in stem and source.split(".")[0] == module.split(".")[0]:
        return True
    return source.startswith(package + ".") and (name.startswith(stem) or stem.startswith(name))


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
    """At most _MAX_SOURCES distinct sources, kernels before launchers and headers, or up to
    _MAX_KERNELS kernels where it names more, picked evenly over their sorted names (a family's
    generated kernels are named by hash, in no order of kind: a backend whose four stages are 13 of
    its 47 programs shows them in a few of a dozen)."""
    unique = sorted(dict.fromkeys(found))
    kernels = [hit for hit in unique if not _launcher(hit[0])]
    rest = [hit for hit in unique if _launcher(hit[0])]
    if len(kernels) > _MAX_KERNELS:
        kernels = [kernels[i * len(kernels) // _MAX_KERNELS] for i in range(_MAX_KERNELS)]
    return (kernels + rest)[: max(_MAX_SOURCES, len(kernels))]


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


def _head(path: str) -> bytes:
    """The source's first _MAX_BYTES: a generated kernel source of several MB (FlashInfer's
    `..._generated_sm100.cu`, 4.5 MB) spells what it needs long before its end (b"" unreadable)."""
    try:
        return boundedread.read_prefix(path, _MAX_BYTES)[0][:_MAX_BYTES]
    except OSError:
        return b""


def _needs_of(rel: str, path: str) -> tuple[list[tuple[str, ...]], list[str]]:
    data = _head(path)
    if not data:
        return [], []
    hit = _spelled(data, rel)
    if hit is None:
        return [], []
    return [native_words.feature(hit[0])], [f"'{hit[0]}' in {rel}"]
