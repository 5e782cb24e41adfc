"""A feature that works on Ampere and raises on the target is one the target loses
(rules.gate_excludes_arch._siblings_for): DeepSpeed 0.19.8's `if major != 8: raise
ValueError("WF6AF16 quantization is only supported on Ampere architectures")`, whose FP6 GEMM
needs only Ampere's mma.sync and fits 12.0's shared memory (an unseen engine, judged a medium
gap). An Ampere-only answer that is no error (a preference, a tile) stays nothing a newer GPU
loses."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_REFUSED = """
import torch


def fp6_linear(mode):
    if mode == "wf6af16":
        if torch.cuda.get_device_properties(0).major != 8:
            raise ValueError("WF6AF16 quantization is only supported on Ampere architectures")
        return "quantized_wf6af16_linear"
    return "blas_fp_linear"
"""

_PREFERRED = """
import torch


def prefer_triton_grouped_mm():
    major, _ = torch.cuda.get_device_capability()
    return major == 8
"""


def test_a_feature_only_ampere_may_use_is_reported_where_the_target_raises(tmp_path: Path) -> None:
    (hit,) = _scan(tmp_path, {"eng/heuristics.py": _REFUSED})
    assert (hit.rule, hit.severity, hit.line) == ("gate-excludes-arch", "medium", 6)
    assert "8.0" in hit.present and "9.0" not in hit.present
    assert "only supported on Ampere" in hit.extra["instead"]


def test_an_ampere_only_preference_is_nothing_the_target_loses(tmp_path: Path) -> None:
    assert _scan(tmp_path, {"eng/accelerator.py": _PREFERRED}) == []


_OWN_GPU_CHECK = """
import torch


class SdpaFwdDslSm80:
    def check_support(self):
        major, minor = torch.cuda.get_device_capability()
        if (major, minor) != (8, 0):
            raise ValueError(f"SdpaFwdDslSm80 requires SM80 (A100); found SM{major}{minor}")
        return True
"""


def test_a_kernel_class_named_for_ampere_checking_its_own_gpu_is_no_loss(tmp_path: Path) -> None:
    """cuDNN 1.32's SM80 SDPA class refuses other GPUs beside its own `Sm120` class: that kernel's
    identity, not a feature withheld; nor a refusal that names no Ampere GPU."""
    assert _scan(tmp_path / "own", {"eng/sdpa.py": _OWN_GPU_CHECK}) == []
    unnamed = _REFUSED.replace("only supported on Ampere architectures", "not supported on this GPU")
    assert _scan(tmp_path / "unnamed", {"eng/heuristics.py": unnamed}) == []
