"""Evidence from the `.cu` sources a JIT module names: a table of arch flags for kernels that
issue tcgen05 / TMEM instructions is expected to lack 12.0 (low); for plain CUDA it is a gap."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_JIT = """
import torch

MODULES = {
    "fmha_a": {"sources": ["fmha/fmha_a_kernel.cu", "fmha/fmha_a_binding.cu"]},
    "fmha_b": {"sources": ["fmha/fmha_b_kernel.cu", "fmha/fmha_b_binding.cu"]},
}
_NVCC_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


def flags():
    major, minor = torch.cuda.get_device_capability()
    return _NVCC_FLAGS.get(f"sm{major}{minor}a", [])
"""


def _tree(kernel_body: str) -> dict[str, str]:
    return {
        "eng/jit/fmha.py": _JIT,
        "eng/data/csrc/fmha/fmha_a_kernel.cu": kernel_body,
        "eng/data/csrc/fmha/fmha_b_kernel.cu": kernel_body,
        "eng/data/csrc/fmha/fmha_a_binding.cu": "void run();\n",
        "eng/data/csrc/fmha/fmha_b_binding.cu": "void run();\n",
    }


def test_kernels_spelling_tmem_in_a_macro_name_make_the_table_expected(tmp_path: Path) -> None:
    # `TMEM_NCOLS`: the need is spelled in an identifier's prefix, as generated kernels do
    found = _scan(tmp_path, _tree("#define TMEM_NCOLS 512\n__global__ void k() {}\n"))
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/fmha.py", 7)]
    assert "'TMEM_' in eng/data/csrc/fmha/fmha_a_kernel.cu" in found[0].extra["evidence"]


def test_plain_cuda_kernels_leave_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _tree("__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"))
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit/fmha.py", 7)]
    assert "evidence" not in found[0].extra
