"""Flags that mean the same on every verb (issue 15, item 12): `-a` for `--arch`; a `--format`
a verb cannot write is a usage error; a product name is an arch; an upgrade of a git checkout
lists the checkout, not the packages of the Python running capgap."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write

TABLE = "SIZES = {9: 1, 10: 2}\n\n\ndef get(major):\n    return SIZES[major]\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {"engine/t.py": TABLE})
    commit_all(repo, "v1")
    return repo


def test_dash_a_is_arch_on_every_verb_that_takes_it(work: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    fix = run_cli("fix", str(work), "-a", "12.0", "--dry-run", "--store", store)
    assert fix.code == 0 and "+SIZES = {9: 1, 10: 2, 12: 2}" in fix.out, fix.err
    scan = run_cli("scan", str(work), "-a", "12.0", "--device", "NVIDIA H200", "--format", "json")
    assert json.loads(scan.out)["arch"] == "12.0"
    binaries = run_cli("binaries", str(work), "-a", "12.0", "--format", "json")
    assert binaries.code == 0, binaries.err


@pytest.mark.parametrize(
    "args",
    [
        ("fix", "{work}", "-a", "12.0"),
        ("patch", "list"),
        ("patch", "show", "x"),
        ("patch", "apply", "{work}"),
        ("patch", "save", "x", "{work}"),
        ("upgrade", "{work}", "--", "true"),
        ("tune", "allreduce", "--nproc", "1"),
        ("probe",),
        ("arch", "12.0"),
        ("binaries", "{work}", "-a", "12.0"),
    ],
)
def test_a_format_the_verb_cannot_write_is_a_usage_error(work: Path, tmp_path: Path, args: tuple) -> None:
    argv = [a.format(work=work) for a in args]
    cut = argv.index("--") if "--" in argv else len(argv)
    store = ["--store", str(tmp_path / "store")] if argv[0] in ("fix", "patch", "upgrade") else []
    res = run_cli(*argv[:cut], "--format", "sarif", *store, *argv[cut:])
    assert res.code == 2, res.err + res.out
    assert res.out == "" and len(res.err.strip().splitlines()) == 1 and "text or json" in res.err
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("RTX PRO 6000", "12.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("GeForce RTX 5090", "12.0"),
        ("A10", "8.6"),
    ],
)
def test_a_product_name_is_its_arch(name: str, cc: str) -> None:
    res = run_cli("arch", name, "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["compute_capability"] == cc


def test_a_product_name_of_several_archs_names_them(work: Path) -> None:
    res = run_cli("arch", "Tesla")
    assert res.code == 2 and "names GPUs of several archs: 6.0 (Tesla P100); 6.1" in res.err
    fix = run_cli("fix", str(work), "--arch", "RTX PRO 6000", "--dry-run")  # --arch takes names too
    assert fix.code == 0 and "12: 2" in fix.out, fix.err


def test_an_upgrade_of_a_checkout_lists_the_checkout_not_capgaps_own_packages(tmp_path: Path) -> None:
    try:
        metadata.version("torch")
    except metadata.PackageNotFoundError:
        pytest.skip("no torch in capgap's environment: nothing that could leak into the table")
    upstream = tmp_path / "up"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {"engine/t.py": TABLE})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    work = tmp_path / "work"
    (work / "engine/t.py").write_text(TABLE.replace("10: 2}", "10: 2, 12: 2}"))
    write(upstream, {"README": "v2\n"})
    commit_all(upstream, "v2")
    res = run_cli(
        "upgrade", str(work), "--store", str(tmp_path / "s"), "--format", "json", "--", "git", "pull", "-q"
    )
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert list(report["versions_before"]) == list(report["versions_after"]) == ["work (git HEAD)"]
    text = run_cli("upgrade", str(work), "--store", str(tmp_path / "s"), "--", "true")
    assert "torch" not in text.out
