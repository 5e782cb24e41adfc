"""Kernel families spelled in the names around a decision (judging.evidence NEEDS)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_FA3_FACTORY = """
import torch


def create_flashattention_v3_backend(runner):
    major, minor = torch.cuda.get_device_capability()
    assert major == 8 or major == 9, "this backend runs on SM80 to SM90 only"
    return object()
"""


def test_flashattention_v3_spelled_whole_is_hopper_s_wgmma_kernel(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/registry.py": _FA3_FACTORY})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/registry.py", 6)]
    assert found[0].extra["evidence"] == "the name create_flashattention_v3_backend"


_DOCSTRING_NEED = '''
import torch

_FAST = None


def use_fast(hidden_size):
    """The TMA kernel needs SM100+ except SM12x (tcgen05, cp.async.bulk)."""
    global _FAST
    if _FAST is None:
        _FAST = torch.cuda.get_device_capability()[0] == 10
    return _FAST and hidden_size == 7168
'''


def test_the_enclosing_function_s_docstring_states_the_need(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/residual.py": _DOCSTRING_NEED})
    assert _brief(found) == [
        ("gate-excludes-arch", "low", "eng/residual.py", 10),
        ("gate-excludes-arch", "low", "eng/residual.py", 11),
    ]
    assert {f.extra["evidence"] for f in found} == {"'tcgen05' in the words of use_fast"}


_DEEPGEMM_WORDS = '''
import torch


def weights_dtype():
    """DeepGEMM takes bf16 head weights only on SM100."""
    if torch.cuda.get_device_capability()[0] == 10:
        return torch.bfloat16
    return torch.float32
'''


def test_deepgemm_named_in_the_function_s_words_is_its_kernel_family(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/weights.py": _DEEPGEMM_WORDS})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/weights.py", 6)]
    assert found[0].extra["evidence"] == "'DeepGEMM' in the words of weights_dtype"


_OPEN_ENDED_REFUSAL = """
import torch


def mxfp8_linear(x):
    if torch.cuda.get_device_capability()[0] != 10:
        raise RuntimeError("MXFP8 dense linear requires Blackwell GPUs (SM100+).")
    return x
"""


def test_a_refusal_naming_an_arch_and_newer_states_no_need(tmp_path: Path) -> None:
    # "SM100+" covers 12.0 in words: the code, not the hardware, turns it away
    found = _scan(tmp_path, {"eng/mxfp8.py": _OPEN_ENDED_REFUSAL})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/mxfp8.py", 5)]
    assert "evidence" not in found[0].extra


_FAMILY_REFUSAL = """
import triton
import torch


@triton.jit
def _portable_kernel(x):
    pass


def dispatch(backend):
    if backend == "flashinfer_trtllm":
        if torch.cuda.get_device_capability()[0] != 10:
            raise RuntimeError("--gemm-backend=flashinfer_trtllm is not supported on this hardware.")
        return backend
    return _portable_kernel
"""


def test_a_refusal_naming_a_kernel_family_states_its_need(tmp_path: Path) -> None:
    # the module's own Triton kernel is not the path refused: the TRT-LLM backend named is
    found = _scan(tmp_path, {"eng/dispatch.py": _FAMILY_REFUSAL})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/dispatch.py", 12)]
    assert "'flashinfer_trtllm'" in found[0].extra["evidence"]


def test_an_arch_named_kernel_class_a_branch_hands_back_is_its_need(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/grouped/api.py": """
import torch


def kernel_class_for(device):
    major, _ = torch.cuda.get_device_capability(device)
    if major >= 10:
        from eng.grouped.kernel_sm100_fp8 import GroupedKernelSm100Fp8

        return GroupedKernelSm100Fp8
    if major == 9:
        from eng.grouped.kernel_sm90_fp8 import GroupedKernelSm90Fp8

        return GroupedKernelSm90Fp8
    raise NotImplementedError("needs SM90+")
"""
        },
    )
    # `kernel_sm100_fp8` alone is no direct evidence; the SM100 class the branch returns is
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/grouped/api.py", 6)]
