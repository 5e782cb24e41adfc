"""`patch edit DIST` / `patch commit DIR`: edit pristine copies outside site-packages, then
turn the edits into a stored patch and apply it (as pnpm patch / patch-commit do)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from capgap.boundedread import read_regular
from capgap.errors import UsageError
from capgap.patches.apply import PatchResult, apply_patches
from capgap.patches.detect import resolve
from capgap.patches.journal import atomic_write, read_bytes, sha256
from capgap.patches.pristine import Pristine
from capgap.patches.run import session
from capgap.patches.safepath import check_rel, safe_join
from capgap.patches.store import Patch, Store

MARKER = ".capgap-edit.json"
_BLOBS = ".capgap-pristine"


def edit(store: Store, spec: str, python: str | None = None, dest: Path | None = None) -> Path:
    from capgap.patches.recall import resolve_recalled

    target, _recalled = resolve_recalled(store, spec, python)
    python = target.python
    if target.kind != "dist":
        raise UsageError(f"{spec} is a git checkout: edit it in place, then `capgap patch save`")
    dest = dest or Path.cwd() / f"capgap-edit-{target.name}-{target.version}"
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} exists and is not empty")
    pristine = Pristine(target, store)
    files: dict[str, str] = {}
    for rel in sorted(target.record):
        data = pristine.get(rel)
        if data is None:
            continue
        atomic_write(dest / check_rel(rel), data, 0o644)
        atomic_write(dest / _BLOBS / str(sha256(data)), data, 0o444)
        files[rel] = str(sha256(data))
    marker = {"dist": target.name, "version": target.version, "python": python, "files": files}
    atomic_write(dest / MARKER, json.dumps(marker, indent=1).encode(), 0o644)
    return dest


def _edited(root: Path, marker: dict[str, object]) -> dict[str, tuple[bytes | None, bytes | None]]:
    known: dict[str, str] = dict(marker["files"])  # type: ignore[call-overload]
    files: dict[str, tuple[bytes | None, bytes | None]] = {}
    for rel, sha in known.items():
        current = read_bytes(safe_join(root, check_rel(rel)))
        if sha256(current) != sha:
            files[rel] = (read_bytes(root / _BLOBS / sha), current)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in {"__pycache__", _BLOBS}]
        for fn in filenames:
            rel = os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")
            if rel not in known and rel != MARKER and not fn.endswith(".pyc"):
                files[rel] = (None, read_bytes(root / rel))
    return files


def commit(
    store: Store,
    edit_dir: Path,
    name: str | None = None,
    for_range: str | None = None,
    note: str = "",
    replace: bool = False,
) -> tuple[Patch, list[PatchResult], list[str]]:
    from capgap.patches.save import check_for_range, lift

    try:
        marker = json.loads(read_regular(edit_dir / MARKER, 16 << 20))
        if not isinstance(marker, dict) or not isinstance(marker.get("files"), dict) or "dist" not in marker:
            raise ValueError("not an edit marker")
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"{edit_dir} is not an edit directory made by `capgap patch edit` ({exc})") from exc
    target = resolve(str(marker["dist"]), marker.get("python"))
    if target.version != marker["version"]:
        raise UsageError(
            f"{edit_dir} holds {target.name} {marker['version']}, but {target.version} is installed"
        )
    if for_range:
        check_for_range(for_range, target)
    files = _edited(edit_dir, marker)
    if not files:
        raise UsageError(f"nothing was edited in {edit_dir}")

    with session(store, target) as messages:
        semantic, warnings = lift(files)
        desc = {**target.desc(), "for": for_range}
        patch = store.save_patch(
            name or target.name, desc, files, semantic=semantic, note=note, replace=replace
        )
        results = apply_patches(store, target, [patch])
    return patch, results, messages + warnings
