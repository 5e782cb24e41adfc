"""A flag named for a feature is no run-time check of it: Megatron-Core 0.16.1's inference layers set
`can_use_custom_nvls_collectives = is_bf16 and is_hopper_or_newer and has_enough_symmetric_memory`
(`major >= 9` standing for multicast) and take `multimem_all_gather` under it. 12.0 PCIe boards pass
the test and have no NVLS multicast (an unseen engine, judged a gap)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_LAYERS = """
import torch


class Linear:
    def _all_gather(self, x, buf):
        is_bf16 = x.dtype == torch.bfloat16
        is_hopper_or_newer = torch.cuda.get_device_properties(x.device).major >= 9
        has_enough_symmetric_memory = buf["handle"] is not None
        can_use_custom_nvls_collectives = is_bf16 and is_hopper_or_newer and {third}
        if can_use_custom_nvls_collectives:
            multimem_all_gather(buf["tensor"], x, buf["handle"])
            return buf["tensor"]
        return gather_along_first_dim(x)

    def _reduce_scatter(self, x, buf):
        is_bf16 = x.dtype == torch.bfloat16
        is_hopper_or_newer = torch.cuda.get_device_properties(x.device).major >= 9
        can_use_custom_nvls_collectives = is_bf16 and is_hopper_or_newer
        if can_use_custom_nvls_collectives:
            x = buf["tensor"]
        return x
"""


def test_a_flag_named_for_multicast_that_tests_the_arch_admits_the_target_into_it(tmp_path: Path) -> None:
    code = _LAYERS.format(third="has_enough_symmetric_memory")
    found = [f for f in _scan(tmp_path, {"eng/layers.py": code}) if f.rule == "gate-admits-unsupported"]
    assert [(f.line, f.severity) for f in found] == [(10, "medium")]
    assert "needs NVLS multicast" in found[0].message
    assert "multicast (multimem) setup or operations to fail" in found[0].consequence


def test_a_flag_that_asks_the_handle_for_multicast_is_a_run_time_check(tmp_path: Path) -> None:
    code = _LAYERS.format(third="buf['handle'].multicast_ptr != 0")
    found = [f for f in _scan(tmp_path, {"eng/layers.py": code}) if f.rule == "gate-admits-unsupported"]
    assert found == []
