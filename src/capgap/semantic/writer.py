"""Write a fix plan: record it in the patch store first, then write the files, journaled.

The order matters for "never lose anything": once the patch is saved, a crash before or during
the writes leaves either the old files (the patch still applies exactly) or a journal the next
capgap run on the target rolls back; there is never an edit in the tree that no patch records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capgap.errors import ConflictError
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
        files: dict[str, tuple[bytes | None, bytes | None]] = {}
        for rel, after in sorted(changed.items()):
            before = plan.originals[rel].encode("utf-8")
            if target.current(rel) != before:
                raise ConflictError(f"{rel} changed while capgap fix was planning; run it again")
            files[rel] = (before, after.encode("utf-8"))
        name = name or patch_name(store, plan)
        patch = store.save_patch(name, target.desc(), files, semantic=plan.records(), note=note)
        journal = Journal.start(store.run_dir(target.root), target.root, "fix", patch=name)
        journal.write_files([(rel, before, after) for rel, (before, after) in files.items()])
        journal.finish()
    return patch, messages
