"""Before an upgrade: does the newer release already do what a saved patch does?

The patch pipeline answers it (apply.py, in a dry run over the release's files): "upstreamed"
means upstream ships the patched content or the change, so `capgap patch drop` is safe.
The release is read as a patch target whose upstream content is known: an unpacked wheel by
its RECORD, an installed dist by its RECORD, a git checkout by HEAD.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capgap.errors import CapgapError
from capgap.patches.apply import PatchResult, apply_patches, select
from capgap.patches.detect import PatchTarget, _record, resolve
from capgap.patches.store import Patch, Store

if TYPE_CHECKING:
    from capgap.targets import Target

_VERDICT = {
    "upstreamed": "upstream now does the same: `capgap patch drop {name}` is safe",
    "applied-already": "already in these files, but not from upstream: keep it",
    "applied": "still needed: upstream does not do it (applies cleanly)",
    "merged": "still needed: upstream does not do it (merges over upstream's changes)",
    "semantic": "still needed: upstream does not do it (re-applied by meaning)",
    "conflict": "still needed, and it conflicts with this release: make it again after upgrading",
    "skipped": "not for this release (outside its --for range)",
}


def release_target(target: Target, python: str | None = None) -> PatchTarget | None:
    """The scan target as the patch pipeline sees it, or None where upstream content is unknown
    (a plain directory: its files could be anyone's)."""
    if target.kind == "dist" and target.name:
        return resolve(target.name, python)
    root = Path(target.root)
    infos = sorted(p for p in root.glob("*.dist-info") if (p / "RECORD").is_file()) if root.is_dir() else []
    if infos:
        name, _, version = infos[0].name[: -len(".dist-info")].partition("-")
        record = _record(root, [f"{infos[0].name}/RECORD"])
        return PatchTarget(
            "dist", target.name or name, root, version=target.version or version, record=record
        )
    if target.kind == "path" and target.files is None:
        try:
            return resolve(str(root))  # a git checkout
        except CapgapError:
            return None
    return None


def verdicts(store: Store, target: Target, python: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Per saved patch of this target's package: its dry-run outcome over the target's files and
    what it means; and a line saying what was looked at (or why nothing was)."""
    if not store.path.is_dir():
        return [], f"no patch store at {store.path}"
    release = release_target(target, python)
    if release is None:
        return (
            [],
            f"{target.spec}: not a release, an installed dist or a git checkout: saved patches not checked",
        )
    patches = select(store, release)
    if not patches:
        return [], f"no saved patches for {release.name} in {store.path}"
    try:  # in their order, each on top of the ones before, as `capgap patch apply` would
        results = [
            _verdict(r.name, r.outcome, [f.to_json() for f in r.files]) for r in _dry(store, release, patches)
        ]
    except CapgapError:  # one patch is damaged: judge each alone, so the others still get an answer
        results = []
        for patch in patches:
            try:
                (r,) = _dry(store, release, [patch])
                results.append(_verdict(r.name, r.outcome, [f.to_json() for f in r.files]))
            except CapgapError as exc:
                results.append({**_verdict(patch.name, "error", []), "verdict": f"cannot tell: {exc}"})
    return results, f"saved patches for {release.label()} in {store.path}"


def _dry(store: Store, release: PatchTarget, patches: list[Patch]) -> list[PatchResult]:
    return apply_patches(store, release, patches, dry_run=True)


def _verdict(name: str, outcome: str, files: list[dict[str, object]]) -> dict[str, Any]:
    return {
        "name": name,
        "outcome": outcome,
        "upstream_does_it": outcome == "upstreamed",
        "verdict": _VERDICT.get(outcome, outcome).format(name=name),
        "files": files,
    }
