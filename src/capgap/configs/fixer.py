"""`capgap fix --configs`: fill a device's missing tuned configs from its closest fitting sibling.

For every shape that `config-missing-device` reports, the file of the closest sibling GPU whose
shared-memory need fits the target's per-block limit (ranking and fit: `coverage.py`) is copied
under the target's file name, byte for byte (the engines read every top-level key as a batch
size, so nothing can be added inside). Siblings that do not fit are refused and listed; a shape
with no fitting sibling is reported as refused, nothing written for it.

Nothing existing is overwritten: a config file is created only where none exists. Every copy is
marked as *not measured* on this GPU, always in a sidecar manifest `capgap-configs.json` in the
directory (each copied file, its source device, "not measured"), and in capgap's patch store
when one is passed and the target is something the store can patch (a git checkout or an
installed distribution): one patch per directory and device, named
`configs-<device>-<directory hash>`, whose files are the copies (pristine None: new files) and
the manifest, so `capgap patch`/`upgrade` carry them over an upgrade. A later run on the same
directory and device extends that patch.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capgap.arch import ArchFacts, ArchSpec
from capgap.boundedread import read_regular
from capgap.configs.analyzer import target_arch, target_devices
from capgap.configs.coverage import (
    CONFIG_MAX_BYTES,
    Candidate,
    ConfigDir,
    ConfigFile,
    ShapeGap,
    collect_dirs,
    coverage,
    rel_to,
)
from capgap.errors import EnvironmentProblem, TargetError, UsageError
from capgap.targets import Target

if TYPE_CHECKING:
    from capgap.patches.detect import PatchTarget
    from capgap.patches.store import Store

MANIFEST = "capgap-configs.json"
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class ConfigCopy:
    """One missing shape of one device: copied, planned (dry run) or refused."""

    device: str
    directory: str  # relative to the target's root
    shape: str
    target_file: str  # relative to the target's root
    status: str  # "copied" | "planned" | "refused"
    source_device: str | None
    source_file: str | None
    need_kb: float | None  # the copied file's estimated need on the target's arch
    limit_kb: int
    reason: str
    refused: tuple[tuple[str, float | None], ...] = ()  # closer siblings that do not fit: (device, need KB)
    recorded_in: str | None = None  # copied: "store:<patch name>" or "manifest"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["refused"] = [{"device": d, "need_kb": n} for d, n in self.refused]
        return data


def _kb(cand: Candidate) -> float | None:
    if cand.need is None or cand.need.bytes is None:
        return None
    return round(cand.need.bytes / 1024, 1)


def _plan(gap: ShapeGap, limit: int) -> tuple[Candidate | None, tuple[tuple[str, float | None], ...], str]:
    refused: list[tuple[str, float | None]] = []
    for cand in gap.candidates:
        if cand.usable:
            if cand.need is not None and cand.need.bytes is None:
                note = "no tile sizes in the file: shared memory not checked"
            else:
                note = f"fits {limit} KB per block"
            return cand, tuple(refused), f"{NOT_MEASURED}: copied from {cand.device} ({note})"
        refused.append((cand.device, _kb(cand)))
    why = "; ".join(f"{d} needs {n:g} KB" if n is not None else f"{d} unreadable" for d, n in refused[:4])
    return (
        None,
        tuple(refused),
        f"no sibling fits {limit} KB per block (out of resource: shared memory): {why}",
    )


def fix_configs(
    target: Target,
    devices: Sequence[str],
    archs: Sequence[ArchSpec] = (),
    dry_run: bool = False,
    store: Store | None = None,
    *,
    python: str | None = None,
    patch_target: PatchTarget | None = None,
) -> list[ConfigCopy]:
    """Copy each device's missing configs from the closest fitting sibling; see the module docstring.

    `store` is a `capgap.patches.store.Store` (anything with its `save_patch` will do; `lock`,
    `exists` and `load` are used when present). The patch target the copies belong to is
    `patch_target`, else resolved from `target` (`python`: the interpreter of an installed dist).
    """
    if target.kind in ("requirement", "wheel") and not dry_run:
        raise UsageError(
            f"{target.spec}: fix --configs writes into an installed distribution or a directory, "
            "not into a downloaded wheel (use --dry-run to see what it would copy)"
        )
    dirs = collect_dirs(target)
    names = target_devices(list(devices), dirs)
    if not names:
        raise UsageError("fix --configs needs a device: run it on the GPU host or pass --device NAME")
    plans = []
    for device in names:
        arch = target_arch(device, tuple(archs))
        if arch is None:
            raise UsageError(f"cannot tell the compute capability of {device!r}: pass --arch")
        plans.append((device, arch))
    ptarget = None if store is None or dry_run else patch_target or _patch_target(target, python)
    copies: list[ConfigCopy] = []
    locking = ptarget is not None and hasattr(store, "lock")
    with store.lock() if locking else nullcontext():  # type: ignore[union-attr]
        for device, arch in plans:
            for directory in dirs:
                copies += _fix_dir(target, directory, device, arch, dry_run, store, ptarget)
    return copies


def _fix_dir(
    target: Target,
    directory: ConfigDir,
    device: str,
    arch: ArchFacts,
    dry_run: bool,
    store: Store | None,
    ptarget: PatchTarget | None,
) -> list[ConfigCopy]:
    cov = coverage(directory, device, arch)
    limit = arch.smem_per_block_kb
    written: dict[str, tuple[Candidate, str]] = {}
    out: list[ConfigCopy] = []
    try:
        for gap in cov.gaps:
            cand, refused, reason = _plan(gap, limit)
            dest = directory.path / gap.name.file_name(cov.spelling)
            status = "refused" if cand is None else ("planned" if dry_run else "copied")
            if cand is not None and not dry_run:
                _create(dest, read_regular(cand.file.path, CONFIG_MAX_BYTES))
                written[dest.name] = (cand, reason)
                # a later device with the same spelling (vLLM's H200 alias) sees it
                directory.files.append(ConfigFile(dest, replace(gap.name, device=cov.spelling)))
            out.append(
                ConfigCopy(
                    device=device,
                    directory=directory.rel,
                    shape=gap.shape,
                    target_file=rel_to(dest, target.root),
                    status=status,
                    source_device=None if cand is None else cand.device,
                    source_file=None if cand is None else rel_to(cand.file.path, target.root),
                    need_kb=None if cand is None else _kb(cand),
                    limit_kb=limit,
                    reason=reason,
                    refused=refused,
                )
            )
    except OSError as exc:
        raise EnvironmentProblem(f"cannot write tuned configs in {directory.rel}: {exc}") from exc
    finally:  # what was written is marked, even when a later write failed
        if written:
            where = _record(directory.path, device, written, store, ptarget)
            out = [c if c.status != "copied" else _with_record(c, where) for c in out]
    return out


def _with_record(copy: ConfigCopy, where: str) -> ConfigCopy:
    return replace(copy, recorded_in=where)


def _patch_target(target: Target, python: str | None) -> PatchTarget | None:
    """The git checkout or installed dist the store can patch, or None (a wheel or requirement in
    capgap's cache, a directory outside git): then the manifest alone marks the copies."""
    from capgap.patches.detect import resolve

    if target.kind == "dist":
        spec = target.spec
    elif target.kind == "path":
        spec = str(target.root)
    else:
        return None
    try:
        return resolve(spec, python)
    except (TargetError, EnvironmentProblem):
        return None


def _create(dest: Path, data: bytes) -> None:
    """Create `dest` with `data`; never replaces an existing file."""
    with dest.open("xb") as fh:
        fh.write(data)


def _record(
    directory: Path,
    device: str,
    written: dict[str, tuple[Candidate, str]],
    store: Store | None,
    ptarget: PatchTarget | None,
) -> str:
    """Mark the copies as not measured (manifest; store patch when possible); say where."""
    manifest = directory / MANIFEST
    try:  # a FIFO or a huge file there is not read: it is replaced, as a broken manifest is
        old = read_regular(manifest, CONFIG_MAX_BYTES) if os.path.lexists(manifest) else None
    except OSError:
        old = None
    data: dict[str, Any] = {"generated_by": "capgap fix --configs", "files": {}}
    if old is not None:
        try:
            loaded = json.loads(old)
            if isinstance(loaded, dict) and isinstance(loaded.get("files"), dict):
                data = loaded
        except (ValueError, RecursionError):
            pass  # a broken manifest is rewritten; its bytes stay in the store's pristine copy
    for name, (cand, reason) in sorted(written.items()):
        data["files"][name] = {
            "device": device,
            "source_device": cand.device,
            "source_file": cand.file.path.name,
            "measured": False,
            "status": NOT_MEASURED,
            "smem_need_kb": _kb(cand),
            "note": reason,
        }
    new = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
    tmp = manifest.with_name(manifest.name + f".tmp{os.getpid()}")
    tmp.write_bytes(new)
    os.replace(tmp, manifest)
    if store is None or ptarget is None:
        return "manifest"
    root = ptarget.root
    files: dict[str, tuple[bytes | None, bytes | None]] = {
        rel_to(directory / name, root): (None, (directory / name).read_bytes()) for name in written
    }
    files[rel_to(manifest, root)] = (old, new)
    dir_key = hashlib.sha256(rel_to(directory, root).encode()).hexdigest()[:10]
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", f"configs-{device.replace(' ', '_')}")[:100] + f"-{dir_key}"
    if hasattr(store, "exists") and store.exists(name):  # extend the earlier run's patch
        earlier = store.load(name)
        for entry in earlier.files:
            pristine, patched = earlier.contents(entry)
            files[entry.path] = (
                (pristine, files[entry.path][1]) if entry.path in files else (pristine, patched)
            )
    store.save_patch(
        name,
        ptarget.desc(),
        files,
        semantic=None,
        note=f"tuned configs copied from sibling GPUs for {device}; {NOT_MEASURED} on this GPU",
        replace=True,
    )
    return f"store:{name}"
