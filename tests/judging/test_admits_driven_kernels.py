"""gate-admits-unsupported: a check that refuses only GPUs below a floor (`if cc < 100: raise
"requires SM100+"`) lets the target into what the API runs, the kernel modules it imports: cuDNN's
`native_sparse_attention/compression/api.py` passes 12.0 into `fmha.py`, a tcgen05 CuTe-DSL kernel,
and cute.compile fails there instead of the check refusing it (judged a medium gap)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_API = """
import torch

from .fmha import BlackwellAttention


class CompressionAttention:
    def check_support(self):
        major, minor = torch.cuda.get_device_capability()
        compute_capability = major * 10 + minor
        if compute_capability < 100:
            raise RuntimeError("CompressionAttention requires SM100+")
        self._is_supported = True
        return True

    def compile(self):
        return BlackwellAttention()
"""

_KERNEL = '''
"""Fused attention forward."""
import cutlass.cute as cute
{imports}


class BlackwellAttention:
    @cute.kernel
    def kernel(self, a):
        pass
'''


def _admits(tmp_path: Path, imports: str, kernel: str = "eng/nsa/fmha.py") -> list:
    files = {"eng/nsa/api.py": _API, kernel: _KERNEL.format(imports=imports)}
    return [(f.severity, f.line) for f in _scan(tmp_path, files) if f.rule == "gate-admits-unsupported"]


def test_a_floor_that_lets_the_target_into_a_tcgen05_kernel_is_a_gap(tmp_path: Path) -> None:
    assert _admits(tmp_path, "from cutlass.cute.nvgpu import tcgen05") == [("medium", 10)]


def test_a_portable_kernel_behind_the_floor_is_no_finding(tmp_path: Path) -> None:
    assert _admits(tmp_path, "from cutlass.cute.nvgpu import warp") == []


def test_a_kernel_named_for_sm100_by_its_path_alone_is_no_evidence(tmp_path: Path) -> None:
    # cuDNN's `causal_conv1d_update_sm100/kernel.py`: a SIMT kernel in a directory named for SM100
    files = {
        "eng/conv_sm100/api.py": _API.replace("from .fmha import", "from .kernel import"),
        "eng/conv_sm100/kernel.py": _KERNEL.format(imports=""),
    }
    assert [f for f in _scan(tmp_path, files) if f.rule == "gate-admits-unsupported"] == []
