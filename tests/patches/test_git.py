"""Patches on a git checkout: save/list/show/drop, apply outcomes, reverse, upgrade -- git pull."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import run_cli
from tests.patches.conftest import GATE_V1, LOCAL_ENTRY, TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import git, sha, tree_sums

GATE_FIXED = GATE_V1.replace("(9, 10)", "(9, 10, 12)")


def _edit_and_save(repos: Repos, name: str = "blackwell") -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (repos.work / "pkg/gate.py").write_text(GATE_FIXED)
    (repos.work / "pkg/sm120.py").write_text("SMEM_KB = 99\n")
    res = run_cli("patch", "save", name, str(repos.work), "--store", str(repos.store))
    assert res.code == 0, res.err


def test_save_records_tracked_edits_and_new_files_with_pristine_and_patched_copies(repos: Repos) -> None:
    _edit_and_save(repos)
    meta = json.loads((repos.store / "blackwell/meta.json").read_text())
    assert meta["target"]["kind"] == "git"
    assert meta["target"]["commit"] == git(repos.work, "rev-parse", "HEAD").stdout.strip()
    assert [f["path"] for f in meta["files"]] == ["pkg/gate.py", "pkg/sm120.py", "pkg/tables.py"]
    new = next(f for f in meta["files"] if f["path"] == "pkg/sm120.py")
    assert new["pristine_sha256"] is None
    diff = (repos.store / "blackwell/patch.diff").read_text()
    assert "+" + LOCAL_ENTRY in diff and "new file mode" in diff
    # the stored diff is a real one: git apply accepts it on a pristine checkout
    git(repos.work, "checkout", "--", ".")
    (repos.work / "pkg/sm120.py").unlink()
    assert (
        git(repos.work, "apply", "--check", str(repos.store / "blackwell/patch.diff"), check=False).returncode
        == 0
    )

    listed = run_cli("patch", "list", "--store", str(repos.store), "--format", "json")
    row = json.loads(listed.out)["patches"][0]
    assert (row["name"], row["files"], row["status"]) == ("blackwell", 3, "not applied")
    shown = run_cli("patch", "show", "blackwell", "--store", str(repos.store))
    assert shown.code == 0 and "12: {2: 64 * MiB" in shown.out


def test_apply_exact_then_already_then_reverse_restores_head(repos: Repos) -> None:
    _edit_and_save(repos)
    pristine = tree_sums(repos.upstream)
    git(repos.work, "checkout", "--", ".")
    (repos.work / "pkg/sm120.py").unlink()
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    outcomes = {f["path"]: f["outcome"] for f in json.loads(res.out)["targets"][0]["patches"][0]["files"]}
    assert res.code == 0 and set(outcomes.values()) == {"applied"}
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_V1)
    again = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    assert json.loads(again.out)["targets"][0]["patches"][0]["outcome"] == "applied-already"
    back = run_cli("patch", "apply", str(repos.work), "--reverse", "--store", str(repos.store))
    assert back.code == 0
    assert tree_sums(repos.work) == pristine


def test_upgrade_git_pull_merges_over_upstream_change_next_to_the_edit(repos: Repos) -> None:
    # upstream edits the line two below the user's new entry (a clean 3-way merge)
    repos.upstream_commit({"pkg/tables.py": TABLES_V1.replace("9: [4, 6, 8]", "9: [2, 4, 6, 8]")})
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    refused = git(repos.work, "pull", "-q", check=False)
    assert refused.returncode != 0 and "would be overwritten" in refused.stderr  # the problem we solve
    res = run_cli(
        "upgrade",
        str(repos.work),
        "--store",
        str(repos.store),
        "--name",
        "sm120",
        "--format",
        "json",
        "--",
        "git",
        "pull",
        "-q",
    )
    assert res.code == 0, res.err + res.out
    report = json.loads(res.out)
    assert report["saved_patch"] == "sm120"
    assert report["patches"][0]["files"][0]["outcome"] == "merged"
    head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
    assert head == git(repos.upstream, "rev-parse", "HEAD").stdout.strip()
    assert (
        report["versions_after"]["work (git HEAD)"]
        == head[:12]
        != report["versions_before"]["work (git HEAD)"]
    )
    text = (repos.work / "pkg/tables.py").read_text()
    assert text == with_local_edit(TABLES_V1.replace("9: [4, 6, 8]", "9: [2, 4, 6, 8]"))


def test_upgrade_with_nothing_changed_locally_just_runs(repos: Repos) -> None:
    repos.upstream_commit({"README": "engine v2\n"})
    res = run_cli("upgrade", str(repos.work), "--store", str(repos.store), "--", "git", "pull", "-q")
    assert res.code == 0, res.err
    assert (repos.work / "README").read_text() == "engine v2\n"


def test_conflict_leaves_file_untouched_and_exits_1_markers_on_request(repos: Repos) -> None:
    _edit_and_save(repos)
    git(repos.work, "checkout", "--", ".")
    (repos.work / "pkg/sm120.py").unlink()
    upstream_gate = GATE_V1.replace("(9, 10)", "(9, 10, 11)")
    (repos.work / "pkg/gate.py").write_text(upstream_gate)
    before = tree_sums(repos.work)
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    assert res.code == 1
    files = {f["path"]: f for f in json.loads(res.out)["targets"][0]["patches"][0]["files"]}
    assert files["pkg/gate.py"]["outcome"] == "conflict"
    assert (
        "(9, 10, 11)" in files["pkg/gate.py"]["conflict"]
        and "(9, 10, 12)" in files["pkg/gate.py"]["conflict"]
    )
    assert tree_sums(repos.work) == before  # no file of a conflicting patch was written
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--conflict", "markers")
    assert res.code == 1
    gate = (repos.work / "pkg/gate.py").read_text()
    assert "<<<<<<< pkg/gate.py (current)" in gate and ">>>>>>> patch blackwell" in gate
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_V1)


def test_upstreamed_when_upstream_ships_the_same_change(repos: Repos) -> None:
    _edit_and_save(repos)
    git(repos.work, "checkout", "--", ".")
    (repos.work / "pkg/sm120.py").unlink()
    # upstream adds key 12 itself and also retouches the neighbouring line
    repos.upstream_commit(
        {
            "pkg/tables.py": with_local_edit(TABLES_V1).replace("# per arch", "# by arch"),
            "pkg/gate.py": GATE_FIXED,
            "pkg/sm120.py": "SMEM_KB = 99\n",
        }
    )
    git(repos.work, "pull", "-q")
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    patch = json.loads(res.out)["targets"][0]["patches"][0]
    assert res.code == 0
    assert patch["outcome"] == "upstreamed"
    assert {f["outcome"] for f in patch["files"]} == {"upstreamed"}
    listed = json.loads(run_cli("patch", "list", "--store", str(repos.store), "--format", "json").out)
    assert listed["patches"][0]["status"] == "upstreamed: drop it"
    assert run_cli("patch", "drop", "blackwell", "--store", str(repos.store)).code == 0
    assert not (repos.store / "blackwell").exists()


def test_failed_upgrade_command_restores_pre_upgrade_state(repos: Repos) -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (repos.work / "pkg/sm120.py").write_text("SMEM_KB = 99\n")
    before = tree_sums(repos.work)
    res = run_cli(
        "upgrade", str(repos.work), "--store", str(repos.store), "--", "git", "pull", "--no-such-flag"
    )
    assert res.code == 1 and "pre-upgrade state restored" in res.out
    assert tree_sums(repos.work) == before
    assert not (repos.work / ".git" / "capgap" / "run" / "journal.jsonl").exists()


def test_rollback_on_conflict_restores_old_commit_and_local_edits(repos: Repos) -> None:
    old_head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
    (repos.work / "pkg/gate.py").write_text(GATE_FIXED)
    before = tree_sums(repos.work)
    repos.upstream_commit({"pkg/gate.py": GATE_V1.replace("(9, 10)", "(9, 10, 11)")})
    res = run_cli(
        "upgrade",
        str(repos.work),
        "--store",
        str(repos.store),
        "--rollback-on-conflict",
        "--format",
        "json",
        "--",
        "git",
        "pull",
        "-q",
    )
    report = json.loads(res.out)
    assert res.code == 1 and report["rolled_back"].startswith("a patch conflicted")
    assert git(repos.work, "rev-parse", "HEAD").stdout.strip() == old_head
    assert tree_sums(repos.work) == before
    # without the flag the upgrade goes through and the conflicting file keeps upstream's content
    res = run_cli("upgrade", str(repos.work), "--store", str(repos.store), "--", "git", "pull", "-q")
    assert res.code == 1
    assert (repos.work / "pkg/gate.py").read_text() == GATE_V1.replace("(9, 10)", "(9, 10, 11)")
    assert run_cli("patch", "list", "--store", str(repos.store)).code == 0


def test_locked_store_refuses_a_second_run(repos: Repos) -> None:
    from capgap.patches.store import Store

    _edit_and_save(repos)
    with Store(repos.store).lock():
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "locked by another capgap run" in res.err
    assert sha(repos.work / "pkg/gate.py") is not None


def test_patch_save_refuses_when_nothing_changed_and_bad_names(repos: Repos) -> None:
    res = run_cli("patch", "save", "x", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "no local changes" in res.err
    (repos.work / "README").write_text("changed\n")
    res = run_cli("patch", "save", "../evil", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "invalid patch name" in res.err
    assert run_cli("patch", "apply", str(repos.work.parent / "nope"), "--store", str(repos.store)).code == 2


def test_target_lock_serialises_runs_from_different_stores(repos: Repos, tmp_path: Path) -> None:
    from capgap.patches.store import target_lock

    _edit_and_save(repos)
    with target_lock(repos.work):
        res = run_cli("patch", "apply", str(repos.work), "--store", str(tmp_path / "other-store"))
    assert res.code == 2 and "another capgap run is working on" in res.err


def test_dry_run_reports_outcomes_and_writes_nothing(repos: Repos) -> None:
    _edit_and_save(repos)
    git(repos.work, "checkout", "--", ".")
    (repos.work / "pkg/sm120.py").unlink()
    before = tree_sums(repos.work)
    res = run_cli(
        "patch", "apply", str(repos.work), "--dry-run", "--store", str(repos.store), "--format", "json"
    )
    files = json.loads(res.out)["targets"][0]["patches"][0]["files"]
    assert res.code == 0 and [f["outcome"] for f in files] == ["applied", "applied", "applied"]
    assert tree_sums(repos.work) == before
