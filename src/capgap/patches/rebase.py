"""Record a patch against the upstream it now sits on, once it was re-applied there.

After an upgrade, a patch re-applied by a merge or by meaning still holds the old version's
pristine and patched copies. Left like that, the tree is no longer "upstream + the store": the
next `upgrade` finds the re-applied file in no patch and saves it again, `--reverse` merges
against the old version's text and conflicts, and every run warns "made for 1.0; applying it to
2.0". So after every successful re-apply (not a dry run, not a reverse, not a rolled-back
upgrade) each patch that needed more than an exact write, or that was made for another version
or commit, is saved again under its own name and place in the apply order: pristine = the
file as the patch found it (upstream as it ships now, plus the patches applied before this one,
so reversing it alone takes out only its own change), patched = the file with the patch in,
made for = the version or commit installed now; semantic records are lifted again from the
new pair (the table may have moved), keeping `prefer` from the old ones. A patch is left as it
was when a file it touches held something else than upstream's content before the run (that
is not the patch's to keep).
"""

from __future__ import annotations

from capgap.errors import CapgapError
from capgap.patches.apply import PatchResult
from capgap.patches.detect import PatchTarget
from capgap.patches.journal import sha256
from capgap.patches.store import Patch, Store

REBASED = ("applied", "merged", "semantic", "applied-already")


def _base(target: PatchTarget) -> str | None:
    return target.version if target.kind == "dist" else target.commit


def _stale(patch: Patch, target: PatchTarget, result: PatchResult) -> bool:
    made_for = patch.target.get("version") if target.kind == "dist" else patch.target.get("commit")
    if made_for != _base(target):
        return True
    if target.kind == "dist" and patch.target.get("python") != target.desc()["python"]:
        return True
    return any(f.outcome in ("merged", "semantic") for f in result.files)


class _NotUpstream(CapgapError):
    pass


def _check_upstream(target: PatchTarget, rel: str, before: bytes | None) -> None:
    """The run must have found upstream's own file: a local edit no patch holds is never folded
    into a patch."""
    if sha256(before) != target.upstream_sha(rel):
        raise _NotUpstream(f"{rel} held changes of its own before the run")


def _records(patch: Patch, files: dict[str, tuple[bytes | None, bytes | None]]) -> list[dict] | None:
    """The new pair's semantic records, for a patch that had some (a line patch stays one: no
    libcst parse of every file a merge re-applied)."""
    from capgap.patches.save import lift

    if not patch.semantic:
        return None

    records, _warnings = lift(files)
    if records is None:  # not (only) table entries now: the old records still say what they meant
        return patch.semantic
    prefer = {
        (str(r.get("symbol", "")).rsplit(".", 1)[-1], r.get("key")): r.get("prefer")
        for r in patch.semantic or []
        if r.get("prefer")
    }
    for rec in records:
        kept = prefer.get((str(rec.get("symbol", "")).rsplit(".", 1)[-1], rec.get("key")))
        if kept:
            rec["prefer"] = kept
    return records


def _save(
    store: Store,
    target: PatchTarget,
    patch: Patch,
    files: dict[str, tuple[bytes | None, bytes | None]],
    semantic: list[dict] | None,
    old: str,
) -> None:
    """The patch again, under its name and in its place in the apply order, made for `target`."""
    store.save_patch(
        patch.name,
        {**target.desc(), "for": patch.for_range},
        files,
        semantic=semantic,
        note=str(patch.meta.get("note") or ""),
        replace=True,
        created=str(patch.meta.get("created")),
        extra={"rebased_from": old},
    )


def rebase(store: Store, target: PatchTarget, patches: list[Patch], results: list[PatchResult]) -> list[str]:
    """Save each re-applied patch against `target` as it is now; returns what was done."""
    by_name = {p.name: p for p in patches}
    messages: list[str] = []
    if target.kind == "git":  # every path's HEAD content in one `git cat-file --batch`
        target.upstream_content(sorted({rel for r in results for rel in r.after}))
    for result in results:
        patch = by_name.get(result.name)
        if patch is None or result.outcome not in REBASED or not result.after:
            continue
        if not _stale(patch, target, result):
            continue
        old = patch.target.get("version") or str(patch.target.get("commit") or "")[:12]
        if result.outcome == "applied-already":  # nothing re-applied: the copies stay as they are
            made_for = patch.target.get("version") if target.kind == "dist" else patch.target.get("commit")
            if made_for == _base(target):  # an older store without the interpreter: record it
                files = {e.path: patch.contents(e) for e in patch.files}
                _save(store, target, patch, files, patch.semantic, old)
            continue
        try:
            files = {}
            for rel, now in result.after.items():
                _check_upstream(target, rel, result.before.get(rel))
                base = result.base.get(rel)  # upstream, plus the patches applied before this one
                if base != now:
                    files[rel] = (base, now)
        except CapgapError as exc:
            messages.append(f"patch {patch.name} stays recorded against {old}: {exc}")
            continue
        if not files:
            continue
        _save(store, target, patch, files, _records(patch, files), old)
        if old != (_base(target) or "")[:12]:
            messages.append(
                f"patch {patch.name} is now recorded against {target.label()} (was made for {old})"
            )
    return messages
