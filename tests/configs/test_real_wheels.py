"""Config coverage on real engine wheels (downloaded once into the wheel cache).

Expectations come from listing the wheel's files here, independently of capgap's parser.
"""

from __future__ import annotations

import re
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest

from capgap.configs.analyzer import analyze
from capgap.configs.coverage import collect_dirs, engine_k_cap, read_json
from capgap.configs.devices import facts_for_device
from capgap.configs.fixer import fix_configs
from capgap.configs.naming import vendor
from capgap.configs.smem import file_need
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target
from tests.real_wheels import fetch_wheel

pytestmark = pytest.mark.network

WHEELS = ["sglang==0.5.23", "vllm==0.33.0"]
RTX = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
RTX_FILE = "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
_DEVICE = re.compile(r"device_name=([^,]*?)(?=,|_down\.json$|\.json$)")


def _wheel(cache: Path, requirement: str) -> Path:
    return fetch_wheel(cache, requirement)


def _listing(wheel: Path) -> dict[str, dict[str, set[str]]]:
    """dir -> device -> shapes (file name with the device cut out), from the zip's member names."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            directory, _, base = member.rpartition("/")
            m = _DEVICE.search(base) if base.endswith(".json") else None
            if m and m.group(1):
                out[directory][m.group(1)].add(base[: m.start(1)] + "{}" + base[m.end(1) :])
    return out


@pytest.fixture(scope="module", params=WHEELS)
def engine(request: pytest.FixtureRequest, wheel_cache: Path, tmp_path_factory: pytest.TempPathFactory):
    wheel = _wheel(wheel_cache, request.param)
    root = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(wheel) as zf:  # only the config files: the rest of the engine is not needed
        zf.extractall(root, [m for m in zf.namelist() if "device_name=" in m and m.endswith(".json")])
    return root, _listing(wheel)


def _nvidia(devices: dict[str, set[str]]) -> dict[str, set[str]]:
    return {d: s for d, s in devices.items() if d.startswith("NVIDIA")}


def test_reports_the_missing_shapes_for_rtx_pro_6000(engine) -> None:
    root, listing = engine
    expected = {}
    for directory, devices in listing.items():
        nvidia = _nvidia(devices)
        have = nvidia.get(RTX_FILE, set())
        siblings = set().union(*(s for d, s in nvidia.items() if d != RTX_FILE)) if nvidia else set()
        if siblings - have:
            expected[directory] = (len(siblings - have), len(siblings | have), len(have))
    assert any("moe" in d for d in expected)  # the MoE configs lack this board, per the listing

    result = analyze(resolve_target(str(root)), ScanOptions(archs=(), devices=(RTX,)))
    got = {
        f.symbol: (f.extra["missing_count"], f.extra["shapes"], f.extra["target_has"])
        for f in result.findings
    }
    assert got == expected
    assert {f.missing for f in result.findings} == {RTX_FILE}
    assert all(f.arch == "12.0" and f.extra["smem_limit_kb"] == 99 for f in result.findings)


def test_no_finding_where_a_device_has_every_shape(engine) -> None:
    root, listing = engine
    complete = sorted(
        (len(shapes), directory, device)
        for directory, devices in listing.items()
        for device, shapes in _nvidia(devices).items()
        if not (directory.endswith("fused_moe/configs") and "H200" in device.split("_"))  # vLLM renames
        and len(shapes) >= 2
        and shapes >= set().union(*_nvidia(devices).values())
    )
    assert complete, "the listing has no device with every shape of some directory"
    _, directory, device = complete[-1]
    result = analyze(resolve_target(str(root)), ScanOptions(archs=(), devices=(device.replace("_", " "),)))
    assert directory not in {f.symbol for f in result.findings}
    assert all(f.missing == device for f in result.findings)


def test_fix_never_copies_a_file_that_does_not_fit(engine) -> None:
    root, _ = engine
    copies = fix_configs(resolve_target(str(root)), [RTX], dry_run=True)
    assert copies
    assert all(c.need_kb is None or c.need_kb <= 99 for c in copies if c.status == "planned")
    assert all(n is None or n > 99 for c in copies for _, n in c.refused)


def test_every_shipped_config_fits_the_gpu_it_was_tuned_on(engine) -> None:
    """The estimate against the engines' own tuning: a config tuned on a GPU ran there.

    Exceptions the data has, each for a reason outside the estimate: SGLang's `triton_3_1_0`
    files were tuned with Triton 3.1 (today's Triton allocates more for their int8-weight
    256-row tiles on Hopper), and vLLM never looks up `dtype=bf16` names (its dtype strings are
    fp8_w8a8, fp8_w8a16, int8_w8a16, int4_w4a16, float32).
    """
    root, _ = engine
    checked = 0
    for directory in collect_dirs(resolve_target(str(root))):
        for f in directory.files:
            arch = facts_for_device(f.name.device) if vendor(f.name.device) == "nvidia" else None
            data = read_json(f.path)
            if arch is None or data is None:
                continue
            need = file_need(data, f.name.dtype, arch, engine_k_cap(f.name, directory.path.as_posix()))
            if need.bytes is None:
                continue
            checked += 1
            if not need.fits(arch.smem_per_block_kb):
                assert directory.rel.endswith("/triton_3_1_0") or f.name.dtype == "bf16", f.path.name
    assert checked > 100
