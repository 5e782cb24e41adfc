"""Kill `capgap fix` at every durable step (CAPGAP_CRASH_AT, like kill -9): there is never an edit
in the tree that no patch records, and the next run ends exactly where one clean run ends."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.patches.helpers import commit_all, git, write
from tests.semantic.test_fix_cli import REL, USE
from tests.semantic.test_fix_upgrade import COMM, FIXED


def _fix(work: Path, store: Path, crash_at: int | None, *extra: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "CAPGAP_CRASH_AT"}
    if crash_at is not None:
        env["CAPGAP_CRASH_AT"] = str(crash_at)
    cmd = [sys.executable, "-m", "capgap", "fix", str(work), "--arch", "12.0", "--store", str(store),
           "--device", "RTX PRO 6000", *extra]
    return subprocess.run(cmd, env=env, capture_output=True, check=False).returncode


def _patched_shas(store: Path) -> set[str]:
    out = set()
    for meta in store.glob("*/meta.json"):
        out |= {f["patched_sha256"] for f in json.loads(meta.read_text())["files"]}
    return out


@pytest.mark.slow
def test_fix_killed_at_every_step_loses_nothing(tmp_path: Path) -> None:
    crashed = 0
    for step in range(1, 40):
        work, store = tmp_path / f"w{step}", tmp_path / f"s{step}"
        work.mkdir()
        git(work, "init", "-q")
        write(work, {REL: COMM + USE})
        commit_all(work, "v1")
        rc = _fix(work, store, step)
        if rc == 0:
            break  # the run has fewer durable steps than `step`: every crash point was tried
        assert rc == 86, f"step {step}: exit {rc}"
        crashed += 1
        text = (work / REL).read_text()
        if text != COMM + USE:  # written: the store must hold exactly this content
            assert hashlib.sha256(text.encode()).hexdigest() in _patched_shas(store), f"step {step}"
        assert _fix(work, store, None) == 0
        assert (work / REL).read_text() == FIXED + USE, f"step {step}"
        assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]
    assert crashed >= 5, crashed
    print(f"fix was killed at each of its {crashed} durable steps")


def _superseded_shas(store: Path) -> set[str]:
    out = set()
    for meta in store.glob("*/meta.json"):
        out |= set((json.loads(meta.read_text()).get("superseded") or {}).values())
    return out


@pytest.mark.slow
def test_fix_values_over_a_copied_entry_killed_at_every_step_loses_nothing(tmp_path: Path) -> None:
    """The update of the fix patch in place (measured values over copied ones): killed anywhere,
    the tree holds the old or the new content, the store holds it, and the next run finishes."""
    from capgap.tune.values import build_values

    values = tmp_path / "values.json"
    built = build_values(cc="12.0", world_size=8, max_size=1 << 25, multimem=False, margin=0.05, measured={})
    values.write_text(json.dumps(built))
    clean = None
    crashed = 0
    for step in range(1, 40):
        work, store = tmp_path / f"w{step}", tmp_path / f"s{step}"
        work.mkdir()
        git(work, "init", "-q")
        write(work, {REL: COMM + USE})
        commit_all(work, "v1")
        assert _fix(work, store, None) == 0
        rc = _fix(work, store, step, "--values", str(values))
        if rc == 0:
            break
        assert rc == 86, f"step {step}: exit {rc}"
        crashed += 1
        digest = hashlib.sha256((work / REL).read_bytes()).hexdigest()
        assert digest in _patched_shas(store) | _superseded_shas(store), f"step {step}"
        assert _fix(work, store, None, "--values", str(values)) == 0, f"step {step}"
        clean = clean or (work / REL).read_text()
        assert (work / REL).read_text() == clean and "12: [6]," in clean, f"step {step}"
        assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]
        assert digest_of_patched(store) == hashlib.sha256(clean.encode()).hexdigest()
    assert crashed >= 3, crashed


def digest_of_patched(store: Path) -> str:
    [entry] = json.loads((store / "fix-sm_120" / "meta.json").read_text())["files"]
    return entry["patched_sha256"]
