"""The pre-upgrade audit on two real SGLang releases (wheels downloaded, never installed or
imported): `capgap scan sglang 0.5.23 --against 0.5.9`.

Checked by hand in both wheels' torch_symm_mem.py: `_WORLD_SIZES_MULTIMEM` is keyed by the
capability major, 9 and 10, in both (0.5.9: `{9: [4, 6, 8], 10: [6, 8]}` at line 47, read as
`[self.device_capability]`; 0.5.23: `10: [4, 6, 8]`, at line 51, read with
`.get(self.device_capability, ())` at line 174, falling back to `two_shot_all_reduce_`). So 12.0
still lacks its entry: the finding stays, its line and consequence changed (a KeyError before,
a fallback now). `TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES` (all_reduce_utils.py) also stays: 0.5.9
indexes it (a KeyError: high), 0.5.23 reads it with `.get()` (silently disabled: medium).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.real_wheels import fetch_wheel

SYMM = "sglang/srt/distributed/device_communicators/"


@pytest.mark.network
@pytest.mark.slow
def test_sglang_0_5_23_against_0_5_9(wheel_cache: Path, tmp_path: Path) -> None:
    new = fetch_wheel(wheel_cache, "sglang==0.5.23")
    old = fetch_wheel(wheel_cache, "sglang==0.5.9")
    store = _patches_made_on(old, tmp_path / "store")
    args = ("scan", str(new), "--against", str(old), "--arch", "12.0", "--no-binaries")
    result = run_cli(*args, "--store", str(store), "--format", "json")
    assert result.code in (0, 1), result.err
    data = json.loads(result.out)
    assert len(data["new"]) + len(data["stayed"]) == len(data["findings"])
    assert len(data["gone"]) + len(data["stayed"]) == data["against"]["findings"]
    stayed = {f["symbol"]: f for f in data["stayed"]}

    multimem = stayed["TorchSymmMemCommunicator._WORLD_SIZES_MULTIMEM"]
    assert multimem["path"] == SYMM + "torch_symm_mem.py" and multimem["rule"] == "table-missing-arch"
    assert (multimem["present"], multimem["missing"], multimem["line"]) == (["9", "10"], "12", 51)
    assert multimem["extra"]["values"]["10"] == [4, 6, 8] and multimem["extra"]["access"] == "get"
    assert "two_shot_all_reduce_" in multimem["consequence"]
    assert multimem["before"]["line"] == 47
    assert "KeyError at run time on 12.0" in multimem["before"]["consequence"]
    assert not any("_WORLD_SIZES_MULTIMEM" in f["symbol"] for f in data["new"] + data["gone"])

    sizes = stayed["TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES"]
    assert sizes["path"] == SYMM + "all_reduce_utils.py"
    assert (sizes["severity"], sizes["before"]["severity"]) == ("medium", "high")

    verdicts = {p["name"]: p for p in data["patches"]}
    assert data["patches_checked"] == f"saved patches for sglang 0.5.23 in {store}"
    assert verdicts["multimem-sizes"]["outcome"] == "upstreamed"  # 0.5.23 made the same change
    assert "`capgap patch drop multimem-sizes` is safe" in verdicts["multimem-sizes"]["verdict"]
    # 12 is still missing, and the line it was added after changed upstream: git merge-file says
    # the two edits touch, so the patch must be made again on 0.5.23
    assert verdicts["multimem-12"]["outcome"] == "conflict"
    assert not verdicts["multimem-12"]["upstream_does_it"]
    assert verdicts["multimem-12"]["verdict"].startswith("still needed, and it conflicts")

    text = run_cli(*args, "--store", str(store)).out  # the scans' cache is warm now
    assert f"severity high -> medium: {SYMM}all_reduce_utils.py:3  table-missing-arch" in text
    summary = (
        f"{len(data['new'])} new, {len(data['gone'])} gone, {len(data['stayed'])} unchanged against {old}"
    )
    assert summary in text
    assert "  multimem-sizes: upstream now does the same: `capgap patch drop multimem-sizes` is safe" in text


def _patches_made_on(wheel: Path, where: Path) -> Path:
    """Two patches a user could have saved on 0.5.9: the 10 -> [4, 6, 8] change 0.5.23 made
    upstream, and an entry for 12 (after the 10 line) that no release has."""
    import zipfile

    from capgap.patches.store import Store

    rel = SYMM + "torch_symm_mem.py"
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(rel)
    assert b"        10: [6, 8],\n" in text  # what the docstring says 0.5.9 has
    store = Store(where)
    desc = {"kind": "dist", "name": "sglang", "version": "0.5.9"}
    store.save_patch("multimem-sizes", desc, {rel: (text, text.replace(b"10: [6, 8]", b"10: [4, 6, 8]"))})
    twelve = text.replace(b"        10: [6, 8],\n", b"        10: [6, 8],\n        12: [4, 6, 8],\n")
    store.save_patch("multimem-12", desc, {rel: (text, twelve)})
    return where
