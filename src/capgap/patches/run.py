"""A run on a target: take the store and target locks, and first finish or undo whatever an
earlier run left half-done (its journal), so that no crash ever loses a file."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capgap.errors import StoreError
from capgap.patches.apply import apply_patches, select
from capgap.patches.detect import PatchTarget
from capgap.patches.journal import last_phase, load_pending, sweep_done
from capgap.patches.store import Store, target_lock


def recover(store: Store, target: PatchTarget) -> list[str]:
    """Undo an interrupted run on this target, or finish it; returns what was done. The run's
    journal lives with the target, so it is found whatever store this run names. One that an
    older capgap left in the store is only named: a store travels between machines and users,
    and a journal in it could make a rollback write anything into the tree."""
    messages = _recover(store, target, store.run_dir(target.root))
    legacy = store.legacy_run_dir(target.root)
    if (legacy / "journal.jsonl").exists():
        messages.append(
            f"{legacy} holds the journal of an interrupted run of an older capgap; it is not replayed "
            "(a journal in a store is not trusted): check the tree, then remove that directory"
        )
    return messages


def _recover(store: Store, target: PatchTarget, run_dir: Path) -> list[str]:
    sweep_done(run_dir.parent)
    journal = load_pending(run_dir)
    if journal is None:
        return []
    if os.path.realpath(journal.root) != os.path.realpath(target.root):
        raise StoreError(f"the journal in {journal.run_dir} names another root ({journal.root}); refusing it")
    kind = str(journal.records[0].get("kind"))
    if kind == "upgrade" and last_phase(journal) in {"cmd", "reapply"}:
        # The upgrade command ran (or may have): every local change is saved as a patch (in the
        # store that upgrade used), so the way forward is to re-apply them all on what is there now.
        journal.remove_temps()
        shutil.rmtree(journal.run_dir)
        return _reapply(store, target, journal.records[0].get("store"))
    warnings = journal.rollback()
    shutil.rmtree(journal.run_dir)
    return [f"rolled back an interrupted {kind} on {target.root}", *warnings]


def _reapply(store: Store, target: PatchTarget, named: object) -> list[str]:
    notes: list[str] = []
    if isinstance(named, str) and os.path.realpath(named) != os.path.realpath(store.path):
        if os.path.isdir(named):
            other = Store(named)
            with other.lock():
                results = apply_patches(other, target, select(other, target))
            done = ", ".join(f"{r.name}: {r.outcome}" for r in results)
            return [
                f"finished an interrupted upgrade of {target.label()} by re-applying the patches of "
                f"{other.path}, the store it used ({done})"
            ]
        notes.append(
            f"the store {named} of the interrupted upgrade is gone; re-applying {store.path}'s patches"
        )
    results = apply_patches(store, target, select(store, target))
    done = ", ".join(f"{r.name}: {r.outcome}" for r in results)
    return [
        *notes,
        f"finished an interrupted upgrade of {target.label()} by re-applying its patches ({done})",
    ]


@contextmanager
def session(store: Store, target: PatchTarget) -> Iterator[list[str]]:
    with store.lock(), target_lock(target.root):
        yield recover(store, target)
