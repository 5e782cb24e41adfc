"""Paths only a sibling gets, for reasons of its own: one that goes on to require GPUs joined by
NVLink (`if not platform.is_fully_connected(ids): return None` further down the same function),
where the target, whose boards have no NVLink, would be turned away too; one whose comment says the
sibling's kernels are tuned for what it switches to."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.cli_runner import run_cli

EXCHANGE = """
    import torch


    class PeerExchange:
        @classmethod
        def create(cls, group, platform):
            if not (platform.is_device_capability_family(100) and group.world_size in (2, 4, 8)):
                return None
            physical_id = platform.physical_device_id(torch.cuda.current_device())
            physical_ids = group.all_gather(physical_id)
            if not platform.is_fully_connected(physical_ids):
                return None
            return cls(group)
"""
PLAIN = """
    import torch


    class PeerExchange:
        @classmethod
        def create(cls, group, platform):
            if not (platform.is_device_capability_family(100) and group.world_size in (2, 4, 8)):
                return None
            physical_id = platform.physical_device_id(torch.cuda.current_device())
            physical_ids = group.all_gather(physical_id)
            if len(physical_ids) != group.world_size:
                return None
            return cls(group)
"""


def _scan(root: Path, text: str) -> list[dict]:
    (root / "eng").mkdir(parents=True, exist_ok=True)
    (root / "eng" / "peer.py").write_text(textwrap.dedent(text).lstrip("\n"))
    res = run_cli("scan", str(root), "--arch", "12.0", "--format", "json", "--no-binaries")
    return [f for f in json.loads(res.out)["findings"] if f["rule"] == "gate-excludes-arch"]


def test_a_path_that_then_needs_nvlink_is_expected_to_leave_the_target_out(tmp_path: Path) -> None:
    found = _scan(tmp_path, EXCHANGE)
    assert found and all(f["severity"] == "low" for f in found)
    assert "NVLink" in found[0]["consequence"]


def test_without_the_nvlink_check_the_exclusion_stays_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, PLAIN)
    assert found and found[0]["severity"] == "medium"


TUNED = """
    import logging

    from eng.platforms import current_platform

    logger = logging.getLogger(__name__)


    def input_schema(key, override):
        if key is None:
            return None
        if key == MXFP8 and override is None and current_platform.is_device_capability_family(90):
            # The SM90 W4A8 kernels are tuned for block FP8 activations, so run MXFP8 that way.
            logger.info("Running MXFP8 activations as block FP8 on Hopper.")
            key = FP8_BLOCK
        return to_schema(key)
"""


def test_a_switch_the_sibling_is_tuned_for_is_its_preference(tmp_path: Path) -> None:
    found = _scan(tmp_path, TUNED)
    assert found and all(f["severity"] == "low" for f in found)
    assert found[0]["extra"].get("tuning")


GATE = """
    import torch

    from eng.platforms import current_platform


    class RouterGate:
        def __init__(self, bias, force_fp32_compute):
            is_hopper = current_platform.is_device_capability((9, 0))
            is_blackwell = current_platform.is_device_capability_family(100)
            can_use_specialized_kernels = (
                current_platform.is_cuda()
                and (is_hopper or is_blackwell)
                and not bias
            )
            if force_fp32_compute and not can_use_specialized_kernels:
                self.params_dtype = torch.float32
            self.allow_specialized_router_gemm = can_use_specialized_kernels
"""


def test_a_flag_later_tested_only_as_not_flag_is_judged_where_it_is_set(tmp_path: Path) -> None:
    # `if ... and not flag:` guards the fallback of the GPUs the flag leaves out, not its path
    found = _scan(tmp_path, GATE)
    assert any(f["line"] == 10 and "can_use_specialized_kernels" in f["message"] for f in found)
