"""The apply pipeline: for each saved patch and each of its files, in this order

1. applied-already  the file equals the patched content (or the change is already in it, on the
                    same upstream content the patch was made on);
2. applied          the file equals the saved pristine: write the patched content exactly;
3. merged           upstream changed the file: `git merge-file` with the saved pristine as base
                    (also when upstream moved the file: the same-named file most like it);
4. semantic         SLOT for `capgap.semantic` (imported lazily, skipped when absent), see below;
5. upstreamed       upstream already contains the change (suggest `patch drop`);
6. conflict         the file is left untouched (or, with markers=True, gets conflict markers);
                    no file of a conflicting patch is written.

Semantic slot contract. When a patch's semantic.json holds records whose "path" is the file:
    capgap.semantic.reapply(records, root=target_root, rel_path=rel, current_text=text_or_None)
returns an object or dict with `outcome` ("semantic" | "upstreamed" | "applied-already" |
"not-found"), `files` (dict rel_path -> new text, possibly another file than the patch's when the
table moved to another module; written here, journaled and atomically, never outside the root)
and `detail` (str). "not-found" falls through to steps 5 and 6, as does an exception raised by
reapply (its message is added to the conflict's detail).
`capgap.semantic.lift(rel_path, pristine_text, patched_text) -> list[dict] | None` is called by
`patch save`; each record is stored with "path" set to its file (when lift didn't set it).

Every write of a run goes through one Journal (journal.py), so a crash is rolled back by the
next run on the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from capgap.errors import StoreError
from capgap.patches.detect import PatchTarget
from capgap.patches.journal import Journal, sha256
from capgap.patches.merge import Merge, MergeJob, change_present, find_moved, merge3, merge_many
from capgap.patches.safepath import Joiner, check_rel
from capgap.patches.store import FileEntry, Patch, Store

RANK = ("skipped", "applied-already", "upstreamed", "applied", "merged", "semantic", "conflict")


@dataclass
class FileResult:
    path: str
    outcome: str
    detail: str = ""
    conflict: str = ""  # both sides of each conflicting region
    writes: dict[str, bytes | None] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. the semantic step's hardware sense

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "outcome": self.outcome, "detail": self.detail}
        if self.conflict:
            out["conflict"] = self.conflict
        if self.writes:
            out["written"] = sorted(self.writes)
        return out


@dataclass
class PatchResult:
    name: str
    outcome: str
    files: list[FileResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # every path the patch touched: as it was before the run, as the patch found it (after the
    # patches before it), and once the patch is in: what rebase.py records after a re-apply
    before: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    base: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    after: dict[str, bytes | None] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "warnings": self.warnings,
            "files": [f.to_json() for f in self.files],
        }


class _View:
    """The target's files as they will be once the planned writes are done."""

    def __init__(self, target: PatchTarget) -> None:
        self.target = target
        self.join = Joiner(target.root)
        self.planned: dict[str, bytes | None] = {}
        self.original: dict[str, bytes | None] = {}
        self.merges: dict[MergeJob, Merge] = {}

    def merge(self, current: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]) -> Merge:
        key = (current, base, theirs, labels)
        if key not in self.merges:
            self.merges[key] = merge3(current, base, theirs, labels)
        return self.merges[key]

    def prefetch_merges(self, patches: list[Patch], reverse: bool) -> None:
        """Run the merges the plan will need up front, together (see merge_many)."""
        jobs: dict[MergeJob, None] = {}  # ordered and without duplicates
        for patch in patches:
            for entry in patch.files:
                pristine, patched = patch.contents(entry)
                if reverse:
                    pristine, patched = patched, pristine
                current = self.read_original(entry.path)
                if current is not None and patched is not None and current not in (pristine, patched):
                    jobs[(current, pristine or b"", patched, _labels(entry.path, patch))] = None
        if len(jobs) > 1:
            self.merges.update(zip(jobs, merge_many(list(jobs)), strict=True))

    def read(self, rel: str) -> bytes | None:
        if rel in self.planned:
            return self.planned[rel]
        return self.read_original(rel)

    def read_original(self, rel: str) -> bytes | None:
        if rel not in self.original:
            self.original[rel] = self.target.current(rel, self.join)
        return self.original[rel]


def _labels(where: str, patch: Patch) -> tuple[str, str, str]:
    return (f"{where} (current)", "pristine", f"patch {patch.name}")


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def _semantic(target: PatchTarget, patch: Patch, rel: str, current: bytes | None) -> FileResult | None:
    records = patch.semantic_for(rel)
    if not records:
        return None
    try:
        import capgap.semantic as semantic
    except ImportError:
        return None
    reapply = getattr(semantic, "reapply", None)
    if reapply is None:
        return None
    try:
        res = reapply(records, root=target.root, rel_path=rel, current_text=_text(current))
    except Exception as exc:  # a bug in the semantic step must not stop the line-based outcome
        return FileResult(rel, "not-found", f"semantic step failed: {type(exc).__name__}: {exc}")
    get = res.get if isinstance(res, dict) else lambda key, default=None: getattr(res, key, default)
    outcome, detail = str(get("outcome", "not-found")), str(get("detail", "") or "")
    if outcome == "semantic":
        files = {
            check_rel(p): str(t).encode("utf-8", "surrogateescape") for p, t in (get("files") or {}).items()
        }
        warnings = [str(w) for w in get("warnings", None) or []]
        return FileResult(rel, "semantic", detail or "re-applied by meaning", writes=files, warnings=warnings)
    if outcome in {"upstreamed", "applied-already"}:
        return FileResult(rel, outcome, detail)
    return FileResult(rel, "not-found", f"semantic: {detail}" if detail else "")


def plan_file(
    target: PatchTarget, view: _View, patch: Patch, entry: FileEntry, reverse: bool, markers: bool
) -> FileResult:
    rel = entry.path
    pristine, patched = patch.contents(entry)
    if reverse:
        pristine, patched = patched, pristine
    current = view.read(rel)
    if current == patched:
        if not reverse and patched is not None and _is_upstream(target, rel, patched, pristine):
            return FileResult(rel, "upstreamed", "upstream ships exactly the patched file")
        return FileResult(rel, "applied-already")
    if current == pristine:
        return FileResult(rel, "applied", "exact", writes={rel: patched})
    where = rel
    if current is None and pristine is not None and patched is not None and not reverse:
        moved = find_moved([pristine, patched], rel, target.tracked_files(), view.read)
        if moved is not None:
            where, current = moved, view.read(moved)
    if current is not None and patched is not None:
        merged = view.merge(current, pristine or b"", patched, _labels(where, patch))
        moved_note = f"file moved upstream: {rel} -> {where}; " if where != rel else ""
        if merged.conflicts == 0 and merged.text == current:
            if not reverse and _is_upstream(target, where, current, pristine):
                return FileResult(rel, "upstreamed", moved_note + "upstream already has this change")
            return FileResult(rel, "applied-already", moved_note + "the change is already present")
        if merged.conflicts == 0:
            return FileResult(
                rel, "merged", moved_note + "3-way merge over upstream changes", writes={where: merged.text}
            )
    else:
        merged = None
    if not reverse:
        sem = _semantic(target, patch, rel, view.read(rel))
        if sem is not None and sem.outcome != "not-found":
            return sem
        sem_note = f"; {sem.detail}" if sem is not None and sem.detail else ""
        if current is not None and change_present(current, pristine, patched):
            return FileResult(rel, "upstreamed", "upstream already contains the patch's lines")
    else:
        sem_note = ""
    if merged is None:
        what = "is gone upstream" if current is None else "changed upstream and the patch deletes it"
        return FileResult(rel, "conflict", f"{rel} {what}{sem_note}")
    writes = {where: merged.text} if markers else {}
    return FileResult(
        rel,
        "conflict",
        f"{merged.conflicts} conflicting region(s) in {where}{sem_note}",
        conflict=merged.conflict_regions(),
        writes=writes,
    )


def _is_upstream(target: PatchTarget, rel: str, current: bytes, pristine: bytes | None) -> bool:
    up = target.upstream_sha(rel)
    return up is not None and up == sha256(current) and up != sha256(pristine)


def version_check(target: PatchTarget, patch: Patch) -> tuple[bool, list[str]]:
    """(in range, warnings): `--for` scopes a patch; another version than its own warns."""
    made_for = patch.target.get("version")
    if patch.for_range:
        from packaging.requirements import Requirement

        spec = Requirement(patch.for_range).specifier
        if target.version is not None and not spec.contains(target.version, prereleases=True):
            return False, []
        return True, []
    if target.kind == "dist" and made_for and made_for != target.version:
        return True, [
            f"patch {patch.name} was made for {target.name} {made_for}; applying it to {target.version}"
        ]
    return True, []


def canonical(name: object) -> str:
    """PEP 503 name normalisation (packaging's costs 0.1 s to import)."""
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def select(store: Store, target: PatchTarget, names: list[str] | None = None) -> list[Patch]:
    """The store's patches for this target (or the named ones), oldest first."""
    if names:
        patches = [store.load(n) for n in names]
    else:
        patches = [
            p
            for p in store.patches()
            if p.target.get("kind") == target.kind
            and canonical(p.target.get("name")) == canonical(target.name)
        ]
    return sorted(patches, key=lambda p: (str(p.meta.get("created")), p.name))


def apply_patches(
    store: Store,
    target: PatchTarget,
    patches: list[Patch],
    *,
    reverse: bool = False,
    markers: bool = False,
    dry_run: bool = False,
    journal: Journal | None = None,
) -> list[PatchResult]:
    view = _View(target)
    view.prefetch_merges(patches, reverse)
    results: list[PatchResult] = []
    for patch in reversed(patches) if reverse else patches:
        in_range, warnings = version_check(target, patch)
        if not in_range:
            results.append(
                PatchResult(
                    patch.name,
                    "skipped",
                    warnings=[
                        f"patch {patch.name} is for {patch.for_range}; {target.name} is {target.version}"
                    ],
                )
            )
            continue
        files = [plan_file(target, view, patch, e, reverse, markers) for e in patch.files]
        outcome = max((f.outcome for f in files), key=RANK.index, default="applied-already")
        paths = sorted({e.path for e in patch.files} | {p for f in files for p in f.writes})
        base = {p: view.read(p) for p in paths}
        if outcome != "conflict" or markers:
            for f in files:
                view.planned.update(f.writes)
            after = {p: view.read(p) for p in paths}
            before = {p: view.read_original(p) for p in paths}
        else:
            after, before, base = {}, {}, {}
            for f in files:
                if f.writes:
                    f.detail += " (not written: another file of this patch conflicts)"
                    f.writes = {}
        warnings += [w for f in files for w in f.warnings]
        results.append(PatchResult(patch.name, outcome, files, warnings, before, base, after))
    changes = [
        (rel, view.read_original(rel), data)
        for rel, data in sorted(view.planned.items())
        if view.read_original(rel) != data
    ]
    refused = target.untrackable([rel for rel, _b, _a in changes])
    if refused:  # nothing is written: a patch writes only files git would track
        rel, why = next(iter(sorted(refused.items())))
        raise StoreError(f"refusing to write {rel!r} in {target.label()}: git would not track it ({why})")
    if dry_run:
        return results
    if changes:
        holder = {sha: p for p in patches for e in p.files for sha in (e.pristine_sha, e.patched_sha) if sha}

        def known_copy(sha: str) -> str | None:  # a verified store blob (read by the plan)
            patch = holder.get(sha)
            return None if patch is None else patch.blob_path(sha)

        own = journal or Journal.start(store.run_dir(target.root), target.root, "apply", lazy=True)
        own.write_files(changes, known_copy=known_copy)
        if journal is None:
            own.finish()
    return results
