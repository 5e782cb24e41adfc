"""`capgap scan NEW --against OLD`: two releases of a toy engine (wheels built by the test), their
findings matched by fingerprint, and each saved patch judged against the newer release."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from capgap.patches.store import Store
from tests.cli_runner import run_cli
from tests.wheel_build import build_wheel

SIZES_V1 = textwrap.dedent(
    """
    import torch

    SIZES = {9: 1, 10: 2}


    def size():
        return SIZES[torch.cuda.get_device_capability()[0]]
    """
)
SIZES_PATCHED = SIZES_V1.replace("{9: 1, 10: 2}", "{9: 1, 10: 2, 12: 2}")
GATE_V1 = textwrap.dedent(
    """
    import torch


    def pick(x):
        if torch.cuda.get_device_capability()[0] == 10:
            return blackwell_kernel(x)
        return x
    """
)
GATE_PATCHED = GATE_V1.replace("== 10:", "in (10, 12):")
# 1.1: upstream took the SIZES patch as it was, moved `pick` down and added a table
GATE_V2 = (
    "import os\n\nMODE = os.environ.get('MODE')\n"
    + GATE_V1
    + textwrap.dedent(
        """

    TILES = {9: 64, 10: 128}


    def tiles():
        return TILES[torch.cuda.get_device_capability()[0]]
    """
    )
)


@pytest.fixture
def releases(tmp_path: Path) -> tuple[Path, Path, Path]:
    old = build_wheel(
        tmp_path / "w1", "toyengine", "1.0", {"toyengine/sizes.py": SIZES_V1, "toyengine/gate.py": GATE_V1}
    )
    new = build_wheel(
        tmp_path / "w2",
        "toyengine",
        "1.1",
        {"toyengine/sizes.py": SIZES_PATCHED, "toyengine/gate.py": GATE_V2},
    )
    store = Store(tmp_path / "store")
    desc = {"kind": "dist", "name": "toyengine", "version": "1.0"}
    store.save_patch("add-12", desc, {"toyengine/sizes.py": (SIZES_V1.encode(), SIZES_PATCHED.encode())})
    store.save_patch("gate-12", desc, {"toyengine/gate.py": (GATE_V1.encode(), GATE_PATCHED.encode())})
    other = {"kind": "dist", "name": "otherengine", "version": "1.0"}
    store.save_patch("not-ours", other, {"otherengine/x.py": (b"a\n", b"b\n")})
    return old, new, store.path


def test_against_an_older_release(releases: tuple[Path, Path, Path]) -> None:
    old, new, store = releases
    args = ("scan", str(new), "--against", str(old), "--arch", "12.0", "--store", str(store))
    result = run_cli(*args, "--format", "json")
    data = json.loads(result.out)
    assert data["against"]["spec"] == str(old) and data["against"]["findings"] == 2
    assert sorted(f["symbol"] for f in data["new"]) == ["TILES"]
    assert sorted(f["symbol"] for f in data["gone"]) == ["SIZES"]  # the patch upstream took
    stayed = {f["symbol"]: f for f in data["stayed"]}
    assert set(stayed) == {"get_device_capability"}  # `pick`, moved down three lines
    assert stayed["get_device_capability"]["before"]["line"] == stayed["get_device_capability"]["line"] - 3
    assert result.code == 1  # TILES: a new KeyError
    verdicts = {p["name"]: p for p in data["patches"]}
    assert set(verdicts) == {"add-12", "gate-12"}  # another package's patch is not judged
    assert verdicts["add-12"]["outcome"] == "upstreamed" and verdicts["add-12"]["upstream_does_it"]
    assert (
        verdicts["gate-12"]["outcome"] in ("applied", "merged")
        and not verdicts["gate-12"]["upstream_does_it"]
    )
    assert data["patches_checked"] == f"saved patches for toyengine 1.1 in {store}"

    text = run_cli(*args)
    assert "upstream now does the same: `capgap patch drop add-12` is safe" in text.out
    assert "gate-12: still needed: upstream does not do it" in text.out
    assert f"1 new, 1 gone, {len(stayed)} unchanged against {old}" in text.out


def test_against_a_directory_and_no_store(releases: tuple[Path, Path, Path], tmp_path: Path) -> None:
    import zipfile

    old, new, _store = releases
    tree = tmp_path / "old-tree"
    with zipfile.ZipFile(old) as zf:
        zf.extractall(tree)
    args = ("scan", str(new), "--against", str(tree), "--arch", "12.0", "--format", "json")
    data = json.loads(run_cli(*args, "--store", str(tmp_path / "none")).out)
    assert sorted(f["symbol"] for f in data["new"]) == ["TILES"]  # a checkout's paths compare with a wheel's
    assert data["patches"] == [] and data["patches_checked"] == f"no patch store at {tmp_path / 'none'}"
    two = run_cli("scan", str(new), str(old), "--against", str(tree), "--arch", "12.0")
    assert two.code == 2 and "name one TARGET" in two.err


def test_patches_judged_on_an_installed_dist(tmp_path: Path) -> None:
    """An installed dist (here rich, in capgap's own environment) is read by its RECORD: a patch
    whose result it ships is upstreamed, one it lacks is still needed."""
    from importlib import metadata

    dist = metadata.distribution("rich")
    rel = "rich/__init__.py"
    current = Path(str(dist.locate_file(rel))).read_bytes()
    store = Store(tmp_path / "store")
    desc = {"kind": "dist", "name": "rich", "version": "0.1"}
    store.save_patch("took-it", desc, {rel: (b"# what rich had before\n" + current, current)})
    store.save_patch("local-tweak", desc, {rel: (current, current + b"\n# a local tweak\n")})
    (tmp_path / "old").mkdir()
    args = ("scan", "rich", "--against", str(tmp_path / "old"), "--arch", "12.0", "--store", str(store.path))
    data = json.loads(run_cli(*args, "--no-binaries", "--format", "json").out)
    assert data["targets"][0]["kind"] == "dist"
    verdicts = {p["name"]: p["outcome"] for p in data["patches"]}
    assert verdicts == {"took-it": "upstreamed", "local-tweak": "applied"}
    assert data["patches_checked"] == f"saved patches for rich {dist.version} in {store.path}"


def test_a_damaged_patch_does_not_hide_the_others(releases: tuple[Path, Path, Path]) -> None:
    old, new, store = releases
    blobs = sorted((store / "gate-12" / "blobs").iterdir())
    blobs[0].write_bytes(b"not what was saved\n")
    args = (
        "scan",
        str(new),
        "--against",
        str(old),
        "--arch",
        "12.0",
        "--store",
        str(store),
        "--format",
        "json",
    )
    result = run_cli(*args)
    verdicts = {p["name"]: p for p in json.loads(result.out)["patches"]}
    assert verdicts["add-12"]["outcome"] == "upstreamed"
    assert (
        verdicts["gate-12"]["outcome"] == "error"
        and "does not match its hash" in verdicts["gate-12"]["verdict"]
    )


def test_patches_judged_on_a_git_checkout(releases: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """A checkout's upstream content is HEAD: a patch HEAD carries is upstreamed there."""
    import subprocess

    old, _new, _store = releases
    repo = tmp_path / "toyengine"
    (repo / "toyengine").mkdir(parents=True)
    (repo / "toyengine" / "sizes.py").write_text(SIZES_PATCHED)
    (repo / "toyengine" / "gate.py").write_text(GATE_V2)
    # the package name the fingerprints carry: the checkout's own, as the wheel's dist-info says it
    (repo / "pyproject.toml").write_text('[project]\nname = "toyengine"\nversion = "1.1"\n')
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "1.1"], check=True)
    store = Store(tmp_path / "git-store")
    desc = {"kind": "git", "name": "toyengine", "root": str(repo)}
    store.save_patch("add-12", desc, {"toyengine/sizes.py": (SIZES_V1.encode(), SIZES_PATCHED.encode())})
    store.save_patch("gate-12", desc, {"toyengine/gate.py": (GATE_V1.encode(), GATE_PATCHED.encode())})
    args = ("scan", str(repo), "--against", str(old), "--arch", "12.0", "--store", str(store.path))
    data = json.loads(run_cli(*args, "--format", "json").out)
    assert sorted(f["symbol"] for f in data["new"]) == ["TILES"]
    assert {p["name"]: p["outcome"] for p in data["patches"]} == {"add-12": "upstreamed", "gate-12": "merged"}
