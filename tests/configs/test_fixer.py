from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from capgap import output
from capgap.arch import parse_arch
from capgap.configs.fixer import MANIFEST, fix_configs
from capgap.configs.report import show_config_copies
from capgap.errors import UsageError
from capgap.patches.store import Store
from capgap.targets import resolve_target

from .treebuild import entry, write_config

RTX = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
RTX_FILE = "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
D = "vllm/model_executor/layers/fused_moe/configs"
BIG = {"1": entry(16, 64, 64, 2), "512": entry(128, 256, 64, 4)}  # 144 KB on sm_120
SMALL = {"1": entry(16, 64, 64, 2), "512": entry(64, 128, 64, 3)}  # 48 KB on sm_120
MID = {"1": entry(64, 128, 64, 4)}  # 72 KB on sm_120


def _tree(root: Path) -> Path:
    d = root / D
    # E=8: the closest sibling (B200, 10.0) does not fit; Ada (8.9, same 99 KB budget) ranks before Hopper
    write_config(d, "E=8,N=7168,device_name=NVIDIA_B200.json", BIG)
    write_config(d, "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json", MID)
    write_config(d, "E=8,N=7168,device_name=NVIDIA_L40S.json", SMALL)
    # E=16: nobody fits
    write_config(d, "E=16,N=1024,device_name=NVIDIA_H100_80GB_HBM3.json", BIG)
    write_config(d, "E=16,N=1024,device_name=NVIDIA_B200.json", BIG)
    # E=32: the same family (12.1) wins over everything else
    write_config(d, "E=32,N=512,device_name=NVIDIA_GB10,dtype=fp8_w8a8.json", MID)
    write_config(d, "E=32,N=512,device_name=NVIDIA_L40S,dtype=fp8_w8a8.json", SMALL)
    write_config(
        d, "E=32,N=512,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8.json", MID
    )
    return root


def _by_shape(copies):
    return {c.shape: c for c in copies}


def test_copies_the_closest_sibling_that_fits_and_refuses_the_rest(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    copies = _by_shape(fix_configs(resolve_target(str(root)), [RTX]))
    assert set(copies) == {"E=8,N=7168", "E=16,N=1024", "E=32,N=512,dtype=fp8_w8a8"}

    e8 = copies["E=8,N=7168"]
    assert (e8.status, e8.source_device, e8.need_kb, e8.limit_kb) == ("copied", "NVIDIA_L40S", 48.0, 99)
    assert e8.refused == ()  # L40S (8.9, 99 KB) ranks first: same shared-memory budget
    assert e8.target_file == f"{D}/E=8,N=7168,device_name={RTX_FILE}.json"
    assert (root / e8.target_file).read_bytes() == (
        root / D / "E=8,N=7168,device_name=NVIDIA_L40S.json"
    ).read_bytes()

    e16 = copies["E=16,N=1024"]
    assert e16.status == "refused" and e16.source_device is None
    assert e16.refused == (("NVIDIA_B200", 144.0), ("NVIDIA_H100_80GB_HBM3", 144.0))
    assert "out of resource: shared memory" in e16.reason
    assert not (root / e16.target_file).exists()

    e32 = copies["E=32,N=512,dtype=fp8_w8a8"]
    assert e32.source_device == "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition"  # same cc 12.0

    manifest = json.loads((root / D / MANIFEST).read_text())
    assert sorted(manifest["files"]) == [
        f"E=32,N=512,device_name={RTX_FILE},dtype=fp8_w8a8.json",
        f"E=8,N=7168,device_name={RTX_FILE}.json",
    ]
    rec = manifest["files"][f"E=8,N=7168,device_name={RTX_FILE}.json"]
    assert (rec["source_device"], rec["measured"], rec["status"]) == ("NVIDIA_L40S", False, "not measured")


def test_ranking_without_a_same_budget_sibling_prefers_the_same_mma_path(tmp_path: Path) -> None:
    d = tmp_path / D
    write_config(d, "E=8,N=8,device_name=NVIDIA_A100-SXM4-80GB.json", MID)  # 8.0: mma.sync like 12.0
    write_config(d, "E=8,N=8,device_name=NVIDIA_B200.json", MID)  # 10.0: tcgen05; fp8/fp4/tma like 12.0
    (c,) = fix_configs(resolve_target(str(tmp_path)), [RTX], dry_run=True)
    assert c.source_device == "NVIDIA_A100-SXM4-80GB"


def test_ranking_among_async_mma_siblings_prefers_nearest_features(tmp_path: Path) -> None:
    d = tmp_path / D
    write_config(d, "E=8,N=8,device_name=NVIDIA_H100_80GB_HBM3.json", MID)  # 9.0: wgmma, no fp4
    write_config(d, "E=8,N=8,device_name=NVIDIA_B200.json", MID)  # 10.0: one feature off (tcgen05)
    (c,) = fix_configs(resolve_target(str(tmp_path)), [RTX], dry_run=True)
    assert c.source_device == "NVIDIA_B200"


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = sorted(p.name for p in (root / D).iterdir())
    copies = fix_configs(resolve_target(str(root)), [RTX], dry_run=True)
    assert sorted(c.status for c in copies) == ["planned", "planned", "refused"]
    assert sorted(p.name for p in (root / D).iterdir()) == before


def test_second_run_finds_nothing_left_and_keeps_the_manifest(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    fix_configs(resolve_target(str(root)), [RTX])
    again = fix_configs(resolve_target(str(root)), [RTX])
    assert [(c.shape, c.status) for c in again] == [("E=16,N=1024", "refused")]
    assert len(json.loads((root / D / MANIFEST).read_text())["files"]) == 2


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_copies_in_a_git_checkout_are_saved_in_the_patch_store_as_new_files(tmp_path: Path) -> None:
    root = _tree(tmp_path / "engine")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "upstream")
    store = Store(tmp_path / "store")
    copies = fix_configs(resolve_target(str(root / "vllm")), [RTX], store=store)
    (name,) = store.names()
    assert name.startswith(f"configs-{RTX_FILE}-")
    assert {c.recorded_in for c in copies if c.status == "copied"} == {f"store:{name}"}
    patch = store.load(name)
    new = f"{D}/E=8,N=7168,device_name={RTX_FILE}.json"
    entries = {e.path: patch.contents(e) for e in patch.files}
    assert sorted(entries) == sorted(
        [new, f"{D}/E=32,N=512,device_name={RTX_FILE},dtype=fp8_w8a8.json", f"{D}/{MANIFEST}"]
    )
    assert entries[new] == (None, (root / new).read_bytes())
    assert entries[f"{D}/{MANIFEST}"][0] is None
    assert "not measured" in str(patch.meta["note"])
    assert patch.target["kind"] == "git"

    # a later run (a shape appeared since) extends the same patch; the manifest stays a new file
    write_config(root / D, "E=64,N=64,device_name=NVIDIA_L40S.json", SMALL)
    fix_configs(resolve_target(str(root)), [RTX], store=store)
    assert store.names() == [name]
    paths = {e.path: e for e in store.load(name).files}
    assert f"{D}/E=64,N=64,device_name={RTX_FILE}.json" in paths and new in paths
    assert paths[f"{D}/{MANIFEST}"].pristine_sha is None


def test_outside_git_the_manifest_alone_marks_the_copies(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    copies = fix_configs(resolve_target(str(_tree(tmp_path / "plain"))), [RTX], store=store)
    assert {c.recorded_in for c in copies if c.status == "copied"} == {"manifest"}
    assert store.names() == []


def test_unknown_device_needs_an_arch(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with pytest.raises(UsageError, match="pass --arch"):
        fix_configs(resolve_target(str(root)), ["NVIDIA Mystery 9000"])
    copies = fix_configs(
        resolve_target(str(root)), ["NVIDIA Mystery 9000"], [parse_arch("12.0")], dry_run=True
    )
    assert {c.shape: c.status for c in copies}["E=16,N=1024"] == "refused"
    with pytest.raises(UsageError, match="needs a device"):
        fix_configs(resolve_target(str(root)), [])


def test_text_output(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    output.reset_consoles()
    copies = fix_configs(resolve_target(str(_tree(tmp_path))), [RTX], dry_run=True)
    show_config_copies(copies, dry_run=True)
    out = " ".join(capsys.readouterr().out.split())
    assert "dry run: nothing written" in out
    assert f"{D}: {RTX} (99 KB per block): would copy 2 of 3, not measured" in out
    assert "E=8,N=7168 │ planned │ NVIDIA_L40S │ 48" in out
    assert "E=16,N=1024 │ refused │ none fits │ NVIDIA_B200 144, NVIDIA_H100_80GB_HBM3 144" in out


def test_a_store_with_only_save_patch_and_an_explicit_patch_target(tmp_path: Path) -> None:
    from capgap.patches.detect import resolve

    root = _tree(tmp_path / "engine")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "upstream")
    real = Store(tmp_path / "store")

    class SaveOnly:  # what a caller wrapping the store passes: save_patch and nothing else
        def save_patch(self, name, desc, files, **kwargs):
            return real.save_patch(name + "-wrapped", desc, files, **kwargs)

    fix_configs(resolve_target(str(root)), [RTX], store=SaveOnly(), patch_target=resolve(str(root)))
    (name,) = real.names()
    assert name.endswith("-wrapped")
    assert {e.path for e in real.load(name).files} >= {f"{D}/{MANIFEST}"}


def test_copies_saved_in_the_store_come_back_with_patch_apply(tmp_path: Path) -> None:
    from tests.cli_runner import run_cli

    root = _tree(tmp_path / "engine")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "upstream")
    store = tmp_path / "store"
    copies = fix_configs(resolve_target(str(root)), [RTX], store=Store(store))
    written = sorted(c.target_file for c in copies if c.status == "copied") + [f"{D}/{MANIFEST}"]
    saved = {rel: (root / rel).read_bytes() for rel in written}
    for rel in written:  # what a fresh checkout of upstream looks like
        (root / rel).unlink()
    result = run_cli("patch", "apply", str(root), "--store", str(store))
    assert result.code == 0, result.err
    assert {rel: (root / rel).read_bytes() for rel in written} == saved


def test_two_devices_one_spelling_copy_once(tmp_path: Path) -> None:
    # vLLM's fused-MoE lookup spells every H200 variant NVIDIA_H200
    write_config(tmp_path / D, "E=8,N=8,device_name=NVIDIA_H100_80GB_HBM3.json", MID)
    copies = fix_configs(resolve_target(str(tmp_path)), ["NVIDIA H200", "NVIDIA H200 NVL"])
    assert [(c.device, c.status, c.target_file) for c in copies] == [
        ("NVIDIA H200", "copied", f"{D}/E=8,N=8,device_name=NVIDIA_H200.json")
    ]


def test_fix_refuses_to_write_into_a_downloaded_wheel(tmp_path: Path) -> None:
    from capgap.targets import Target

    root = _tree(tmp_path)
    for kind in ("wheel", "requirement"):
        with pytest.raises(UsageError, match="not into a downloaded wheel"):
            fix_configs(Target("vllm==0.33.0", kind, root), [RTX])
    assert [c.status for c in fix_configs(Target("x.whl", "wheel", root), [RTX], dry_run=True)].count(
        "planned"
    ) == 2


@pytest.mark.usefixtures("no_hang")
def test_hostile_config_files_and_manifest_are_skipped_or_replaced_never_read(tmp_path: Path) -> None:
    """Issue 16: a config that is a FIFO, a link to /dev/zero or JSON nested past the parser, and
    a manifest that is a FIFO, cost no hang and no traceback."""
    import os

    root = _tree(tmp_path)
    os.mkfifo(root / D / "E=64,N=64,device_name=NVIDIA_H100_80GB_HBM3.json")
    (root / D / "E=64,N=128,device_name=NVIDIA_B200.json").symlink_to("/dev/zero")
    (root / D / "E=64,N=256,device_name=NVIDIA_L40S.json").write_text("[" * 100_000)
    os.mkfifo(root / D / MANIFEST)
    copies = _by_shape(fix_configs(resolve_target(str(root)), [RTX]))
    assert copies["E=8,N=7168"].status == "copied"
    assert not any(shape.startswith("E=64") and c.status == "copied" for shape, c in copies.items())
    manifest = json.loads((root / D / MANIFEST).read_text())  # a regular file again, capgap's own
    assert f"E=8,N=7168,device_name={RTX_FILE}.json" in manifest["files"]
