"""Apply the store's patches target by target, and `patch list`'s status column."""

from __future__ import annotations

from capgap.errors import CapgapError, StoreError, UsageError
from capgap.patches.apply import PatchResult, apply_patches, select
from capgap.patches.detect import PatchTarget, resolve
from capgap.patches.rebase import rebase
from capgap.patches.recall import resolve_recalled
from capgap.patches.run import session
from capgap.patches.store import Patch, Store

_STATUS = {
    "applied-already": "applied",
    "applied": "not applied",
    "merged": "not applied (merges)",
    "semantic": "not applied (semantic)",
    "upstreamed": "upstreamed: drop it",
    "conflict": "conflict",
    "skipped": "outside its --for range",
}


def _target_of(patch: Patch, python: str | None) -> PatchTarget:
    t = patch.target
    if t.get("kind") == "git":
        root = t.get("root")
        if not root:
            raise StoreError(f"patch {patch.name}: no checkout recorded; name the target")
        return resolve(str(root), python)
    return resolve(str(t.get("name")), python or (str(t["python"]) if t.get("python") else None))


def groups(
    store: Store, spec: str | None, python: str | None, only: list[str] | None, notes: list[str] | None = None
) -> list[tuple[PatchTarget, list[Patch]]]:
    """Resolve every target first, so a missing one fails before anything is written."""
    if spec is not None:
        target, recalled = resolve_recalled(store, spec, python)
        if recalled and notes is not None:
            notes.append(recalled)
        patches = select(store, target, only)
        for p in patches:
            if (p.target.get("kind"), p.target.get("name")) != (target.kind, target.name) and only:
                kind, name = p.target.get("kind"), p.target.get("name")
                raise UsageError(f"patch {p.name} is for {kind} {name}, not {target.label()}")
        return [(target, patches)]
    patches = [store.load(n) for n in only] if only else store.patches()
    if not patches:
        raise StoreError(f"no patches in {store.path}")
    out: dict[str, tuple[PatchTarget, list[Patch]]] = {}
    for p in patches:
        target = _target_of(p, python)
        out.setdefault(str(target.root) + target.name, (target, []))[1].append(p)
    return [(t, select(store, t, [p.name for p in ps])) for t, ps in out.values()]


def apply_all(
    store: Store,
    spec: str | None,
    python: str | None,
    only: list[str] | None,
    *,
    reverse: bool = False,
    markers: bool = False,
    dry_run: bool = False,
) -> list[tuple[PatchTarget, list[PatchResult], list[str], list[str]]]:
    """Per target: (target, results, warnings, notes); notes say which environment was used and
    which patches are now recorded against the installed version (rebase.py)."""
    runs = []
    notes: list[str] = []
    for target, patches in groups(store, spec, python, only, notes):
        if dry_run:
            results = apply_patches(store, target, patches, reverse=reverse, dry_run=True)
            runs.append((target, results, [], notes))
            notes = []
            continue
        with session(store, target) as messages:
            results = apply_patches(store, target, patches, reverse=reverse, markers=markers)
            if not reverse:
                notes = notes + rebase(store, target, patches, results)
        if not patches:
            messages = [*messages, f"no saved patches for {target.label()} in {store.path}"]
        runs.append((target, results, messages, notes))
        notes = []
    return runs


def statuses(store: Store, python: str | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    targets: dict[tuple[object, object, object], PatchTarget | str] = {}
    patches = store.patches()
    for name, why in store.damaged.items():  # listed, so that it can be seen and dropped
        reason = why.removeprefix(f"patch {name}: ")
        rows.append(
            {"name": name, "target": "?", "files": 0, "base": "", "for": None, "status": f"damaged: {reason}"}
        )
    for patch in patches:
        t = patch.target
        key = (t.get("kind"), t.get("name"), t.get("root"))
        if key not in targets:
            try:
                targets[key] = _target_of(patch, python)
            except CapgapError as exc:
                targets[key] = "not installed" if t.get("kind") == "dist" else f"target missing ({exc})"
        target = targets[key]
        if isinstance(target, str):
            status = target
        else:
            try:
                status = _STATUS[apply_patches(store, target, [patch], dry_run=True)[0].outcome]
            except CapgapError as exc:
                status = f"error: {exc}"
        rows.append(
            {
                "name": patch.name,
                "target": f"{t.get('kind')} {t.get('name')}",
                "files": len(patch.files),
                "base": t.get("version") or str(t.get("commit") or "")[:12],
                "for": patch.for_range,
                "status": status,
            }
        )
    return sorted(rows, key=lambda r: str(r["name"]))
