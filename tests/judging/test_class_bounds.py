"""Capability bounds written as class attributes (xFormers' operators): a class caps the GPUs it
serves, a method of a base class refuses a device past the cap."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _brief, _scan

_BASE = """
import torch


class OpBase:
    CUDA_MINIMUM_COMPUTE_CAPABILITY = (5, 0)
    CUDA_MAXIMUM_COMPUTE_CAPABILITY = None

    @classmethod
    def not_supported_reasons(cls, device):
        reasons = []
        device_capability = torch.cuda.get_device_capability(device)
        if device_capability < cls.CUDA_MINIMUM_COMPUTE_CAPABILITY:
            reasons.append("too old")
        elif (
            cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY is not None
            and device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY
        ):
            reasons.append("too new")
        return reasons
"""


def test_a_class_that_caps_the_gpus_it_serves_leaves_the_newer_out(tmp_path: Path) -> None:
    files = {
        "eng/ops/common.py": _BASE,
        "eng/ops/cutlass.py": """
        from eng.ops.common import OpBase


        class FwOp(OpBase):
            OPERATOR = torch.ops.aten._efficient_attention_forward
            CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)


        class BwOp(OpBase):
            CUDA_MAXIMUM_COMPUTE_CAPABILITY = FwOp.CUDA_MAXIMUM_COMPUTE_CAPABILITY
    """,
        "eng/ops/flash.py": """
        from eng.ops.common import OpBase


        class FwOp(OpBase):
            CUDA_MINIMUM_COMPUTE_CAPABILITY = (8, 0)
    """,
    }
    found = _scan(tmp_path / "cap", files)
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/ops/cutlass.py", 6)]
    assert found[0].message.startswith("FwOp.CUDA_MAXIMUM_COMPUTE_CAPABILITY = 9.0 caps the operator")
    assert "eng/ops/common.py:16 compares the device" in found[0].consequence
    # the same cap on a module that runs FlashAttention-3 (wgmma): expected
    files["eng/ops/cutlass.py"] = files["eng/ops/cutlass.py"].replace(
        "torch.ops.aten._efficient_attention_forward", "torch.ops.flash_attn_3.fwd"
    )
    fa3 = _scan(tmp_path / "fa3", files)
    assert _brief(fa3) == [("gate-excludes-arch", "low", "eng/ops/cutlass.py", 6)]
    assert fa3[0].extra["evidence"] == "'flash_attn_3' (line 5)"
    # a cap no method compares a device with is a number, not a gate
    files["eng/ops/common.py"] = _BASE.replace("cls.CUDA_MAXIMUM", "cls.OTHER")
    assert _scan(tmp_path / "unread", files) == []


def test_a_function_s_name_says_what_it_decides(tmp_path: Path) -> None:
    """`fa3_available()` (FlashAttention-3, `fa3` before an underscore) keeps wgmma to Hopper:
    expected; a name that says nothing of a kernel leaves the exclusion a gap."""
    text = """
    import torch

    def {name}():
        is_90a = (8, 0) <= torch.cuda.get_device_capability() <= (9, 0)
        return is_90a and _flash_module() is not None
    """
    named = _scan(tmp_path / "fa3", {"eng/dispatch.py": text.format(name="fa3_available")})
    assert {f.severity for f in named} == {"low"} and named[0].line == 4
    assert "fa3_available" in named[0].extra["evidence"]
    plain = _scan(tmp_path / "plain", {"eng/dispatch.py": text.format(name="fast_path_ok")})
    assert (plain[0].line, plain[0].severity) == (4, "medium")


def test_a_floor_above_the_target_within_its_generation_refuses_it(tmp_path: Path) -> None:
    """GPTQModel 7.7.0's W4A NVFP4 linear: `MIN_COMPUTE_CAPABILITY = (12, 1)` ("GB10 / SM 12.1 only")
    over a base that refuses `capability < cls.MIN_COMPUTE_CAPABILITY`; 12.0 has the same FP4 tensor
    cores (an unseen engine, judged a gap). A floor at a later generation is left alone: the
    operator's hardware begins there."""
    files = {
        "eng/ops/common.py": _BASE,
        "eng/ops/nvfp4.py": """
        from eng.ops.common import OpBase


        class W4ANVFP4Linear(OpBase):
            CUDA_MINIMUM_COMPUTE_CAPABILITY = (12, 1)


        class BlackwellOp(OpBase):
            CUDA_MINIMUM_COMPUTE_CAPABILITY = (10, 0)
    """,
    }
    found = _scan(tmp_path, files)
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/ops/nvfp4.py", 5)]
    said = "W4ANVFP4Linear.CUDA_MINIMUM_COMPUTE_CAPABILITY = 12.1 is the operator's floor"
    assert found[0].message.startswith(said)
    assert _scan(tmp_path / "hopper", files, arch="9.0") == []
