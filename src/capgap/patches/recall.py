"""Which environment a distribution's patches belong to: the store records the interpreter with
each patch of an installed dist, so `patch apply`, `upgrade` and `fix` need `--python` only once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from capgap.errors import UsageError
from capgap.patches.detect import PatchTarget, resolve
from capgap.patches.store import Store


def _canonical(name: object) -> str:
    import re

    return re.sub(r"[-_.]+", "-", str(name)).lower()


def stored_pythons(store: Store, name: str) -> dict[str, str]:
    """interpreter -> the first patch recording it, for the store's patches of dist `name`
    (interpreters that no longer exist are left out)."""
    out: dict[str, str] = {}
    for patch in store.patches():
        t = patch.target
        python = t.get("python")
        same = t.get("kind") == "dist" and _canonical(t.get("name")) == _canonical(name)
        if same and python and os.access(str(python), os.X_OK):
            out.setdefault(str(python), patch.name)
    return out


def resolve_recalled(store: Store, spec: str, python: str | None) -> tuple[PatchTarget, str | None]:
    """resolve(spec, python); without --python, a dist name is looked up in the environment its
    saved patches recorded. Returns the target and a line saying which environment was used."""
    if python or Path(spec).expanduser().is_dir():
        return resolve(spec, python), None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        name = Requirement(spec).name
    except InvalidRequirement:
        return resolve(spec, python), None
    known = stored_pythons(store, name)
    if len(known) > 1:
        listed = ", ".join(f"{p} (patch {n})" for p, n in sorted(known.items()))
        raise UsageError(
            f"the patches of {name} in {store.path} were saved for several environments "
            f"({listed}): pass --python to choose one"
        )
    if not known:
        return resolve(spec, None), None
    [(recalled, patch)] = known.items()
    if recalled == sys.executable:  # capgap's own environment: what a bare name means anyway
        return resolve(spec, None), None
    note = f"{name}: using the environment of {recalled} (recorded with patch {patch})"
    return resolve(spec, recalled), note
