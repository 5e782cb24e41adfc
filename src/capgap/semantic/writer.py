"""Write a fix plan: record it in the patch store first, then write the files, journaled.

The order matters for "never lose anything": once the patch is saved, a crash before or during
the writes leaves either the old files (the patch still applies exactly) or a journal the next
capgap run on the target rolls back; there is never an edit in the tree that no patch records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capgap.errors import ConflictError, UsageError
from capgap.semantic.fixer import FixPlan

if TYPE_CHECKING:
    from capgap.patches.detect import PatchTarget
    from capgap.patches.store import Patch, Store


def unique_name(store: Store, base: str) -> str:
    """`base`, else `base-2`, `base-3`, ... (a later fix gets its own patch)."""
    name, n = base, 1
    while store.exists(name):
        n += 1
        name = f"{base}-{n}"
    return name


def patch_name(store: Store, plan: FixPlan) -> str:
    return unique_name(store, f"fix-sm_{plan.arch.number}")


def _superseded(patch: Patch) -> dict[str, str]:
    """rel -> the patched sha256 this fix patch held before a later fix updated it."""
    raw = patch.meta.get("superseded")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def unsaved_edits(store: Store, target: PatchTarget, rels: list[str]) -> list[str]:
    """Files with local edits that no saved patch holds: a fix patch over them would make
    `upgrade` think they are saved, and their edits would be lost on the next upgrade. The
    content a fix patch held before an update (a run killed before writing it) counts as saved:
    the updated patch holds it plus the update."""
    from capgap.patches.apply import select
    from capgap.patches.journal import sha256

    saved = set()
    for p in select(store, target):
        saved |= {(e.path, e.patched_sha) for e in p.files} | set(_superseded(p).items())
    out = []
    for rel in rels:
        current = sha256(target.current(rel))
        if current != target.upstream_sha(rel) and (rel, current) not in saved:
            out.append(rel)
    return out


def _same_patch(store: Store, files: dict[str, tuple[bytes | None, bytes | None]]) -> Patch | None:
    """A fix patch already holding exactly these files (saved by a run killed before its writes)."""
    from capgap.patches.journal import sha256

    want = {(rel, sha256(before), sha256(after)) for rel, (before, after) in files.items()}
    for name in store.names():
        if name.startswith("fix-"):
            patch = store.load(name)
            if {(e.path, e.pristine_sha, e.patched_sha) for e in patch.files} == want:
                return patch
    return None


def _update(
    store: Store,
    target: PatchTarget,
    name: str,
    files: dict[str, tuple[bytes | None, bytes | None]],
    records: list[dict],
) -> Patch | None:
    """Fold this run's edits into the fix patch `name` when the files hold exactly what it wrote
    (a measured value over a copied one): the patch keeps its pristine copies, its patched copies
    become the new content, its records the new values. None: make a new patch instead."""
    from capgap.patches.journal import sha256

    if not store.exists(name):
        return None
    patch = store.load(name)
    if (patch.target.get("kind"), patch.target.get("name")) != (target.kind, target.name):
        return None
    entries = {e.path: e for e in patch.files}
    superseded = _superseded(patch)
    merged = {e.path: patch.contents(e) for e in patch.files}
    for rel, (before, after) in files.items():
        entry = entries.get(rel)
        if entry is None:
            merged[rel] = (before, after)
        elif sha256(before) == entry.patched_sha:
            superseded[rel] = str(entry.patched_sha)
            merged[rel] = (merged[rel][0], after)
        elif sha256(after) == entry.patched_sha and superseded.get(rel) == sha256(before):
            continue  # an update killed before its writes: the patch holds it already
        else:
            return None
    held = {e.path: e.patched_sha for e in patch.files}
    if {rel: sha256(after) for rel, (_b, after) in merged.items()} == held:
        return patch
    new = {(r.get("path"), r.get("symbol"), r.get("key")) for r in records}
    semantic = [r for r in patch.semantic or [] if (r.get("path"), r.get("symbol"), r.get("key")) not in new]
    return store.save_patch(
        name,
        {**patch.target, "for": patch.for_range},
        merged,
        semantic=semantic + records,
        note=str(patch.meta.get("note") or ""),
        replace=True,
        created=str(patch.meta.get("created")),
        extra={"superseded": superseded},
    )


def finish_updates(store: Store, target: PatchTarget) -> list[str]:
    """Write what an update of a fix patch (see _update) saved but was killed before writing: a
    file still holding the content the patch held before gets the patch's content now."""
    from capgap.patches.apply import select
    from capgap.patches.journal import Journal, sha256
    from capgap.patches.run import session

    if not store.path.is_dir():  # (a half-done replace of a patch is finished by the session)
        return []
    with session(store, target) as messages:
        for patch in select(store, target):
            superseded = _superseded(patch) if patch.name.startswith("fix-") else {}
            writes = []
            for e in patch.files:
                old = superseded.get(e.path)
                if old is not None and old != e.patched_sha:
                    current = target.current(e.path)
                    if sha256(current) == old:
                        writes.append((e.path, current, patch.blob(e.patched_sha)))
            if writes:
                journal = Journal.start(store.run_dir(target.root), target.root, "fix", patch=patch.name)
                journal.write_files(writes)
                journal.finish()
                messages.append(f"finished an interrupted update of patch {patch.name}")
    return messages


def write_plan(
    plan: FixPlan, store: Store, target: PatchTarget, *, name: str | None = None, note: str = ""
) -> tuple[Patch, list[str]]:
    """Save the plan as a patch (pristine, patched, semantic records) and write its files.

    Returns the patch and messages about interrupted runs that were recovered first. Refuses
    (ConflictError, nothing written) when a file changed since the plan was made.
    """
    from capgap.patches.journal import Journal
    from capgap.patches.run import session

    changed = plan.changed
    with session(store, target) as messages:
        unsaved = unsaved_edits(store, target, sorted(changed))
        if unsaved:
            raise UsageError(
                f"{', '.join(unsaved)}: local edits that no saved patch holds; save them first "
                f"(capgap patch save NAME {target.root if target.kind == 'git' else target.name}), "
                "then run fix again"
            )
        files: dict[str, tuple[bytes | None, bytes | None]] = {}
        for rel, after in sorted(changed.items()):
            before = plan.originals[rel].encode("utf-8")
            if target.current(rel) != before:
                raise ConflictError(f"{rel} changed while capgap fix was planning; run it again")
            files[rel] = (before, after.encode("utf-8"))
        patch = _same_patch(store, files) if name is None else None  # an interrupted run saved it
        if patch is None and name is None:
            patch = _update(store, target, f"fix-sm_{plan.arch.number}", files, plan.records())
            if patch is not None:
                messages = [*messages, f"patch {patch.name} updated in place (its pristine copies kept)"]
        if patch is None:
            name = name or patch_name(store, plan)
            patch = store.save_patch(name, target.desc(), files, semantic=plan.records(), note=note)
        journal = Journal.start(store.run_dir(target.root), target.root, "fix", patch=patch.name)
        journal.write_files([(rel, before, after) for rel, (before, after) in files.items()])
        journal.finish()
    return patch, messages
