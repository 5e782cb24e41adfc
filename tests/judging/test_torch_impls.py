"""Attention implementations torch registers by name (judging.torchimpls): "FA4" handed to
`torch.nn.attention.activate_flash_attention_impl` runs only on majors 9 and 10 (torch 2.13's
`_fa4_common_support_error`)."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import all_facts
from tests.judging.test_decisions import _brief, _scan

_PICKER = """
import torch


def has_cuda_capability(major: int, minor: int) -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (major, minor)


def get_cuda_flash_attention_impl() -> str | None:
    # Blackwell (SM 10.0) and newer use FA4; Hopper (SM 9.0) uses FA3.
    if has_cuda_capability(10, 0):
        return "FA4"
    if has_cuda_capability(9, 0):
        return "FA3"
    return None
"""


def test_torch_fa4_runs_on_majors_9_and_10_only() -> None:
    facts = all_facts()
    archs = ("8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1")
    assert [cc for cc in archs if facts[cc].has("torch_fa4")] == ["9.0", "10.0", "10.3"]


def test_a_floor_that_picks_torchs_fa4_for_newer_gpus_admits_12_0_into_a_refusal(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/tools/utils.py": _PICKER})
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    # `>= (10, 0)` gives 12.0 the name "FA4", which torch's registry refuses on major 12: high,
    # the engine's own default choice fails when the model is built
    assert _brief(admits) == [("gate-admits-unsupported", "high", "eng/tools/utils.py", 10)]
    assert "torch's registered FA4 attention" in admits[0].consequence
    assert "returns 'FA4' for 12.0" in admits[0].consequence
    # on a B200 the same path runs: nothing to say
    on_b200 = _scan(tmp_path / "b200", {"eng/tools/utils.py": _PICKER}, "10.0")
    assert [f for f in on_b200 if f.severity != "low"] == []


def test_fa4_in_a_module_that_never_names_torchs_registry_is_flash_attn_s_own(tmp_path: Path) -> None:
    # flash-attn's CuTe interface ("FA4") has an SM120 path: a name alone says nothing
    code = _PICKER.replace("get_cuda_flash_attention_impl", "pick_flash_version")
    found = _scan(tmp_path, {"eng/tools/utils.py": code})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []
