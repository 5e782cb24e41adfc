"""A chain that keeps why a path is refused in a variable (`reason = "..."`, `else: reason = None`,
then `if reason is not None: return False`): a sentence there is a refusal and None is the yes
(issue 14, point 2, polarity), so the finding names the arm the target misses, not a sibling's
other refusal."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_REASONS = """
import torch

def use_gemm_allreduce(tp_size, dtype):
    major, minor = torch.cuda.get_device_capability()
    if dtype != torch.bfloat16:
        reason = "the model dtype is not BF16"
    elif major != 10:
        reason = "the device is not SM100-family"
    elif not 1 < tp_size <= 16:
        reason = "TP size is not in the supported range 2-16"
    else:
        reason = None
    if reason is not None:
        log("GEMM-AR is disabled because %s", reason)
        return False
    init_gemm_allreduce()
    return True
"""


def test_the_refused_arch_misses_the_none_arm_not_a_sibling_refusal(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, {"eng/gemm_ar.py": _REASONS}, arch="12.0")
    assert found.message.startswith("major leaves 12.0 out: 10.0, 10.3 sets reason = None, 12.0 ")
    assert "sets reason = 'the device is not SM100-family'" in found.message
    assert "TP size" not in found.message


def test_a_name_set_to_none_and_a_word_is_no_reason_variable(tmp_path: Path) -> None:
    # `backend = "cutlass"` ... `backend = None`: an answer and no answer, not reasons
    tree = {
        "eng/pick.py": """
import torch

def pick_backend():
    major, minor = torch.cuda.get_device_capability()
    if major == 10:
        backend = "cutlass"
    else:
        backend = None
    return backend
"""
    }
    (found,) = _scan(tmp_path, tree, arch="12.0")
    assert "10.0, 10.3 sets backend = 'cutlass', 12.0 sets backend = None" in found.message
