"""A flag named for the backward pass configures training code, which no inference server runs
(issue 14, point 10: backward-only code carries `extra.where`): Transformer Engine 2.20's
`self.use_FAv2_bwd = os.getenv("NVTE_FUSED_ATTN_USE_FAv2_BWD") == "1" and cc == (9, 0)` (judged
not-a-gap) is low, where a forward flag of the same shape stays medium."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_ATTENTION = """
import os

import torch


class FusedAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.{flag} = os.getenv("NVTE_USE_IT", "0") == "1" and torch.cuda.get_device_capability() == (9, 0)

    def forward(self, q):
        if self.{flag}:
            return flash_attn_2_kernel(q)
        return fused_attn_kernel(q)
"""


def test_a_backward_flag_is_training_code(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, {"eng/backends.py": _ATTENTION.format(flag="use_FAv2_bwd")})
    assert (found.severity, found.extra["where"]) == ("low", "backward")


def test_a_forward_flag_of_the_same_shape_stays_a_loss(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, {"eng/backends.py": _ATTENTION.format(flag="use_FAv2_fwd")})
    assert (found.severity, found.extra["where"]) == ("medium", "runtime")
