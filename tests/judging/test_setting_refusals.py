"""A setting refused on every GPU but a named few (rules.gate_excludes_arch._fails_where_others_never):
vLLM 0.28-0.34's `if use_fp4 and not is_device_capability_family(100): raise ValueError(...)`
sends 12.0 either way by a setting, and what it loses is the setting (judged medium gaps: the
vendored DeepGEMM ships SM120 FP4 kernels; the module's own Triton kernels need nothing 12.0
lacks). Not a requirement written for newer GPUs or for the
target itself (sglang's `if cap >= 10 and cuda < 13: raise`, FlashInfer's `if sm120 and cudnn
< 9.14: raise`): a condition of the path, which no pre-Hopper GPU meets. Nor a check of a
setting by name, judged where a path picks the name (tests/judging/test_validations.py)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_LEFT_OUT = """
import torch
import triton
import triton.language as tl


@triton.jit
def _pack_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def indexer_uses_fp4(kv_dtype):
    use_fp4 = kv_dtype == "mxfp4"
    if use_fp4 and torch.cuda.get_device_capability()[0] != 10:
        raise ValueError("indexer_kv_dtype='mxfp4' requires Blackwell datacenter GPUs (sm_10x)")
    return use_fp4
"""

_NEWER_GPUS_REQUIREMENT = """
import torch


def check_prefill(backend, cuda_major):
    if backend == "flashinfer" and torch.cuda.get_device_capability()[0] >= 10 and cuda_major < 13:
        raise ValueError("--prefill-backend flashinfer on SM100+ requires CUDA 13+")
    return backend
"""

_TARGET_S_OWN_REQUIREMENT = """
import torch


def check_fp4(use_nvfp4, cudnn_version):
    if not use_nvfp4 and torch.cuda.get_device_capability()[0] == 12 and cudnn_version < 91400:
        raise RuntimeError("MXFP4 GEMM on SM120 needs cuDNN 9.14")
    return True
"""

_STOCHASTIC_ROUNDING = """
import torch


def check_mamba(enable_stochastic_rounding, backend):
    if enable_stochastic_rounding and torch.cuda.get_device_capability()[0] != 10:
        raise ValueError(
            "Stochastic rounding with the triton backend requires SM100 because it uses the "
            "cvt.rs.f16x2.f32 PTX instruction."
        )
    return backend
"""


def test_a_setting_only_the_named_gpus_may_use_is_reported(tmp_path: Path) -> None:
    (hit,) = _scan(tmp_path, {"eng/indexer.py": _LEFT_OUT})
    assert (hit.rule, hit.severity, hit.line) == ("gate-excludes-arch", "medium", 14)
    assert hit.present == ("10.0", "10.3")
    assert hit.extra["instead"].startswith("raises ValueError")


def test_a_requirement_of_newer_gpus_is_no_gap(tmp_path: Path) -> None:
    assert _scan(tmp_path, {"eng/prefill.py": _NEWER_GPUS_REQUIREMENT}) == []


def test_a_requirement_written_for_the_target_is_no_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/gemm.py": _TARGET_S_OWN_REQUIREMENT})
    assert [f for f in found if f.rule == "gate-excludes-arch"] == []


def test_a_refusal_naming_the_instruction_says_why(tmp_path: Path) -> None:
    """`cvt.rs` is built for sm_100a/sm_103a alone: the refusal's words are the evidence."""
    (hit,) = _scan(tmp_path, {"eng/mamba.py": _STOCHASTIC_ROUNDING})
    assert hit.severity == "low"
    assert "cvt" in hit.extra["evidence"]
