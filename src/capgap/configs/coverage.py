"""Which config shapes a device lacks in a directory, and which siblings' files could stand in.

A *directory* is a folder of device-named config files (`naming.parse_config_name`). For a target
device it splits into the shapes the target has and the *gaps*: shapes that at least one sibling
(another GPU of the target's vendor) has a file for and the target has none. AMD or Intel files
are tuned for another compiler backend and are never siblings of an NVIDIA GPU.

For each gap the siblings are ranked by how close their GPU is to the target ("closest"):
1. the same compute capability (another board of the same chip: `H100_PCIe` for `H100_80GB_HBM3`);
2. the same arch family in the facts (`blackwell-rtx`: 12.0 and 12.1);
3. the same shared memory per block (tiles were tuned under the same budget: 8.6/8.9 for 12.0);
4. the same MMA instructions: mma.sync (8.x, 12.x) or async wgmma/tcgen05 (9.0, 10.x), which
   decides how Triton pipelines the tiles (`smem.py`);
5. the fewest differing features (wgmma, tcgen05, TMA, clusters, FP8, FP4 tensor cores);
6. the nearest compute capability number;
GPUs whose cc capgap cannot tell come last; ties go by name, so the choice is deterministic.
Each sibling's file is checked against the target's per-block shared-memory limit
(`smem.file_need` on the target's arch): a file that would not fit is *refused*, because launching
it fails with `out of resource: shared memory`.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from capgap.arch import FEATURES, ArchFacts, all_facts
from capgap.boundedread import read_regular
from capgap.configs.devices import cc_for_device
from capgap.configs.naming import (
    DEVICE_PART,
    ConfigName,
    engine_of,
    file_spellings,
    parse_config_name,
    shape_family,
    vendor,
)
from capgap.configs.smem import SmemNeed, file_need
from capgap.targets import Target, iter_files


@dataclass(frozen=True)
class ConfigFile:
    path: Path  # absolute
    name: ConfigName


@dataclass
class ConfigDir:
    rel: str  # relative to the target's root, "/"-separated
    path: Path
    files: list[ConfigFile] = field(default_factory=list)

    @property
    def engine(self) -> str | None:
        """From the absolute path: a target rooted inside an engine package still knows its engine."""
        return engine_of(self.path.as_posix())

    def by_shape(self) -> dict[tuple[tuple[str, ...], tuple[str, ...], str], dict[str, ConfigFile]]:
        out: dict[tuple[tuple[str, ...], tuple[str, ...], str], dict[str, ConfigFile]] = defaultdict(dict)
        for f in self.files:
            out[f.name.key][f.name.device] = f
        return out


def _may_be_config(name: str) -> bool:
    """What parse_config_name looks at first, before any Path is built (trees have 1000s of files)."""
    return name.endswith(".json") and DEVICE_PART in name


def collect_dirs(target: Target) -> list[ConfigDir]:
    """Every directory of the target holding device-named config files, in path order.

    For an installed dist (files from its RECORD) each such directory is also listed on disk:
    configs added after the install (by `capgap fix --configs` or by hand) are not in RECORD.
    """
    dirs: dict[Path, ConfigDir] = {}
    seen: set[Path] = set()

    def add(path: Path) -> None:
        name = parse_config_name(path.name)
        if name is None or not name.device or path in seen:
            return
        seen.add(path)
        parent = path.parent
        if parent not in dirs:
            dirs[parent] = ConfigDir(rel_to(parent, target.root), parent)
        dirs[parent].files.append(ConfigFile(path, name))

    for path in iter_files(target, _may_be_config):
        add(path)
    if target.files is not None:
        for parent in list(dirs):
            try:
                with os.scandir(parent) as entries:
                    names = sorted(e.name for e in entries if e.is_file(follow_symlinks=False))
            except OSError:  # unreadable now: keep what RECORD listed
                continue
            for name in names:
                add(parent / name)
    return sorted(dirs.values(), key=lambda d: d.rel)


@dataclass(frozen=True)
class Candidate:
    """A sibling GPU's file for a shape the target lacks, judged on the target's limits."""

    device: str  # file spelling
    file: ConfigFile
    cc: str | None
    need: SmemNeed | None  # None: the file could not be read as JSON
    limit_kb: int | None

    @property
    def fits(self) -> bool | None:
        """True/False against the limit; None when the need or the limit is unknown."""
        if self.need is None:
            return False
        return None if self.limit_kb is None else self.need.fits(self.limit_kb)

    @property
    def usable(self) -> bool:
        """A copy is allowed: it fits, or it has no tile sizes at all (nothing to check)."""
        if self.need is None or self.limit_kb is None:
            return False
        return self.need.bytes is None or bool(self.need.fits(self.limit_kb))


@dataclass(frozen=True)
class ShapeGap:
    name: ConfigName  # a sibling's name (its device replaced by the target's gives the file to write)
    shape: str
    family: str
    candidates: tuple[Candidate, ...]  # closest first

    @property
    def best(self) -> Candidate | None:
        return next((c for c in self.candidates if c.usable), None)


@dataclass(frozen=True)
class DirCoverage:
    directory: ConfigDir
    device: str  # the device name as the driver reports it
    spelling: str  # the file spelling the directory's engine looks up
    arch: ArchFacts | None
    siblings: tuple[str, ...]  # other devices of the target's vendor with files here
    shapes: int  # shapes with a file for some GPU of the target's vendor (target included)
    target_has: int
    gaps: tuple[ShapeGap, ...]
    families: tuple[tuple[str, int, int], ...]  # (family, target has, siblings have)
    unreadable: tuple[Path, ...] = ()  # sibling files that are not JSON (not copyable)


def _closeness(target: ArchFacts | None, cand_cc: str | None, device: str) -> tuple[object, ...]:
    other = facts_for_cc(cand_cc)
    if target is None or other is None:
        return (1, device)
    return (
        0,
        other.cc != target.cc,
        other.family != target.family,
        other.smem_per_block_kb != target.smem_per_block_kb,
        (other.wgmma or other.tcgen05) != (target.wgmma or target.tcgen05),
        sum(other.has(f) != target.has(f) for f in FEATURES),
        abs(other.number - target.number),
        device,
    )


def engine_k_cap(name: ConfigName, dir_path: str) -> int | None:
    """BLOCK_SIZE_K as the engine launches it may be smaller than the file says.

    vLLM's fused-MoE launcher (`invoke_fused_moe_triton_kernel`) uses
    min(BLOCK_SIZE_K, min(block_shape)) for block-quantised weights; SGLang passes it unchanged.
    """
    shape = name.block_shape
    parts = PurePosixPath(dir_path).parts
    if engine_of(dir_path) == "vllm" and "fused_moe" in parts and shape and all(shape):
        return min(shape)
    return None


def facts_for_cc(cc: str | None) -> ArchFacts | None:
    return all_facts().get(cc) if cc else None


CONFIG_MAX_BYTES = 16 << 20  # a tuned-config JSON is a few KB; anything far larger is not one


def read_json(path: Path) -> object | None:
    """A config file's JSON; None for one that is unreadable, not a regular file, huge or bad."""
    try:
        return json.loads(read_regular(path, CONFIG_MAX_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: [[[[...
        return None


def coverage(directory: ConfigDir, device: str, arch: ArchFacts | None) -> DirCoverage:
    """The target's coverage of one directory (see the module docstring)."""
    spellings = file_spellings(device, directory.path.as_posix())
    shapes = directory.by_shape()
    present = {d for per in shapes.values() for d in per}
    spelling = next((s for s in spellings if s in present), spellings[0])
    limit = arch.smem_per_block_kb if arch else None
    own_vendor = vendor(spelling)
    gaps: list[ShapeGap] = []
    fam_target: Counter[str] = Counter()
    fam_siblings: Counter[str] = Counter()
    siblings: set[str] = set()
    total = has = 0
    unreadable: list[Path] = []
    for per in shapes.values():
        kin = {d: f for d, f in per.items() if vendor(d) == own_vendor or d == spelling}
        others = {d: f for d, f in kin.items() if d != spelling}
        if not kin:
            continue
        any_file = next(iter(kin.values()))
        family = shape_family(any_file.name.shape)
        total += 1
        siblings.update(others)
        if others:
            fam_siblings[family] += 1
        if spelling in kin:
            has += 1
            fam_target[family] += 1
            continue
        cands = []
        for dev, f in others.items():
            data = read_json(f.path)
            k_cap = engine_k_cap(f.name, directory.path.as_posix())
            need = None if data is None else file_need(data, f.name.dtype, arch, k_cap)
            if data is None:
                unreadable.append(f.path)
            cands.append(Candidate(dev, f, cc_for_device(dev), need, limit))
        cands.sort(key=lambda c: _closeness(arch, c.cc, c.device))
        gaps.append(ShapeGap(any_file.name, any_file.name.shape, family, tuple(cands)))
    families = tuple(
        (fam, fam_target[fam], fam_siblings[fam]) for fam in sorted(set(fam_target) | set(fam_siblings))
    )
    gaps.sort(key=lambda g: _shape_order(g.shape))
    return DirCoverage(
        directory,
        device,
        spelling,
        arch,
        tuple(sorted(siblings)),
        total,
        has,
        tuple(gaps),
        families,
        tuple(sorted(unreadable)),
    )


def _shape_order(shape: str) -> tuple[object, ...]:
    """Numbers compare as numbers: E=8 before E=16."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", shape))


def rel_to(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return os.fspath(path)
