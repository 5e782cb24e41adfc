"""Warm-ups and precompiles (issue 14, point 1: judge the decision that chooses the path): a
warm-up gated like the path it readies loses the target nothing of its own; the choice of the path
is judged where it is made."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_WARM = """
import torch

def _is_b300():
    return torch.cuda.get_device_capability() == (10, 3)

def vision_attention(q, k, v):
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) == (10, 3):
        return fused_vision_attention(q, k, v)
    return sdpa(q, k, v)

def precompile_attention_backend():
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (10, 3):
        return False
    compile_vision_kernels()
    return True
"""


def test_a_precompile_gated_like_its_path_is_low_and_the_choice_is_judged(tmp_path: Path) -> None:
    found = {f.line: f for f in _scan(tmp_path, {"eng/vision.py": _WARM}, arch="12.0")}
    assert found[8].severity == "medium"  # the choice of the backend: the loss, if any, is here
    assert found[14].severity == "low"
    assert found[14].consequence.startswith("a warm-up ('precompile_attention_backend') of a path chosen")


def test_a_warm_up_module_is_read_as_one(tmp_path: Path) -> None:
    tree = {
        "eng/warmup/msa_warmup.py": """
import torch

def run(model):
    if torch.cuda.get_device_capability()[0] == 10:
        mixed_batch_attention(model)
""",
    }
    (only,) = _scan(tmp_path, tree, arch="12.0")
    assert only.severity == "low"
    assert "a warm-up ('msa_warmup')" in only.consequence
