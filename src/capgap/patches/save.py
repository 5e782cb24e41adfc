"""Turn local changes into a stored patch (pristine copies, diff, semantic records)."""

from __future__ import annotations

from capgap.patches.apply import select
from capgap.patches.detect import PatchTarget
from capgap.patches.journal import sha256
from capgap.patches.pristine import Pristine
from capgap.patches.store import Patch, Store

Changes = dict[str, tuple[str | None, bytes | None]]


def uncovered(store: Store, target: PatchTarget, changes: Changes, replacing: str | None = None) -> Changes:
    """Changes no saved patch accounts for (the file isn't exactly some patch's patched content)."""
    saved: set[tuple[str, str | None]] = set()
    for patch in select(store, target):
        if patch.name != replacing:
            saved.update((e.path, e.patched_sha) for e in patch.files)
    return {rel: ch for rel, ch in changes.items() if (rel, sha256(ch[1])) not in saved}


def lift(
    files: dict[str, tuple[bytes | None, bytes | None]],
) -> tuple[list[dict[str, object]] | None, list[str]]:
    """Semantic records from `capgap.semantic.lift`, when that module is there."""
    try:
        from capgap.semantic import lift as lift_file  # type: ignore[attr-defined]
    except ImportError:
        return None, []
    records: list[dict[str, object]] = []
    warnings: list[str] = []
    for rel, (pristine, patched) in sorted(files.items()):
        if pristine is None or patched is None or not rel.endswith(".py"):
            continue
        try:
            found = lift_file(rel, pristine.decode("utf-8"), patched.decode("utf-8"))
        except Exception as exc:  # a lifting bug must not stop the save: the diff is still kept
            warnings.append(
                f"{rel}: semantic lifting failed ({type(exc).__name__}: {exc}); saved as a diff only"
            )
            continue
        for rec in found or []:
            records.append({**rec, "path": rec.get("path", rel)})
    return records or None, warnings


def save_changes(
    store: Store,
    target: PatchTarget,
    name: str,
    changes: Changes,
    *,
    for_range: str | None = None,
    note: str = "",
    replace: bool = False,
) -> tuple[Patch, list[str]]:
    """Store `changes` as patch `name`; refuses (PristineUnavailable) before writing anything."""
    pristine = Pristine(target, store)
    files = {rel: (pristine.get(rel) if up is not None else None, cur) for rel, (up, cur) in changes.items()}
    semantic, warnings = lift(files)
    desc = {**target.desc(), "for": for_range}
    return store.save_patch(name, desc, files, semantic=semantic, note=note, replace=replace), warnings


def check_for_range(for_range: str, target: PatchTarget) -> None:
    """--for must name the target's distribution and give a version range."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from capgap.errors import UsageError

    try:
        req = Requirement(for_range)
    except InvalidRequirement as exc:
        raise UsageError(f"--for {for_range!r}: {exc}") from exc
    if canonicalize_name(req.name) != canonicalize_name(target.name) or not req.specifier:
        raise UsageError(f"--for must name {target.name} with a version range, e.g. '{target.name}>=1.0,<2'")
