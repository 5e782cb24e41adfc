"""Scan a real SGLang wheel (downloaded, never installed or imported) for its capability tables.

Checked by hand against sglang 0.5.23: `TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES` (all_reduce_utils.py)
and `TorchSymmMemCommunicator._WORLD_SIZES_MULTIMEM` (torch_symm_mem.py) are keyed by the
capability major 9 and 10 and read with `.get(device_capability)`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan
from tests.real_wheels import fetch_wheel

SGLANG = "sglang==0.5.23"
SYMM = "sglang/srt/distributed/device_communicators/"


@pytest.fixture(scope="module")
def sglang_wheel(wheel_cache: Path) -> Path:
    return fetch_wheel(wheel_cache, SGLANG)


@pytest.mark.network
@pytest.mark.slow
def test_real_sglang_wheel_tables(sglang_wheel: Path) -> None:
    archs = tuple(parse_arch(a) for a in ("9.0", "10.0", "12.0"))
    report = run_scan([str(sglang_wheel)], ScanOptions(archs=archs, binaries=False))
    tables = {(f.arch, f.symbol): f for f in report.findings if f.rule == "table-missing-arch"}

    sizes = tables[("12.0", "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES")]
    assert (sizes.path, sizes.present, sizes.missing) == (SYMM + "all_reduce_utils.py", ("9", "10"), "12")
    assert sizes.extra["access"] == "get" and sizes.extra["key_style"] == "major-int"
    assert sizes.extra["values"]["9"] == {"2": 67108864, "4": 67108864, "6": 134217728, "8": 134217728}
    assert sizes.consequence.startswith(".get() returns None on 12.0: silently disabled")

    multimem = tables[("12.0", "TorchSymmMemCommunicator._WORLD_SIZES_MULTIMEM")]
    assert (multimem.path, multimem.present, multimem.missing) == (
        SYMM + "torch_symm_mem.py",
        ("9", "10"),
        "12",
    )
    assert "two_shot_all_reduce_" in multimem.consequence

    for arch in ("9.0", "10.0"):  # the tables have these archs: nothing may be reported
        assert (arch, "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES") not in tables
        assert (arch, "TorchSymmMemCommunicator._WORLD_SIZES_MULTIMEM") not in tables
    for (arch, _symbol), f in tables.items():  # no table is reported for an arch one of its keys covers
        major = arch.split(".")[0]
        assert arch not in {k.strip("'\"()").replace(", ", ".") for k in f.present}
        assert not (f.extra["key_style"] == "major-int" and major in f.present)
    assert report.skipped == []  # 0.5.23 has no file capgap cannot read
