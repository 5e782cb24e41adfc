"""A gate in a kernel family's own small package reads what the package's kernel modules need
(issue 14, "a need only with evidence"): FlashInfer's `prims_ts/gemm/api.py` gates its GEMM with
`@supported_compute_capability([100, 103, 107])` and loads `kernel.py` beside it by file name,
a CuTe-DSL kernel whose docstring speaks of its TMEM accumulators."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_API = """
import importlib.util
from pathlib import Path

from eng.utils import supported_compute_capability


@supported_compute_capability([100, 103])
def _check_gemm(a):
    return True


def _load_kernel():
    spec = importlib.util.spec_from_file_location("k", Path(__file__).with_name("kernel.py"))
    return importlib.util.module_from_spec(spec)
"""

_KERNEL = '''
"""{doc}"""
import cutlass.cute as cute


@cute.kernel
def gemm_kernel(a, b):
    pass
'''


def _found(tmp_path: Path, doc: str, other: str | None = None) -> list:
    files = {"eng/prims/gemm/api.py": _API, "eng/prims/gemm/kernel.py": _KERNEL.format(doc=doc)}
    if other is not None:
        files[f"eng/prims/gemm/{other}"] = _KERNEL.format(doc="A plain mma.sync tile loop.")
    return [f for f in _scan(tmp_path, files) if f.path.endswith("api.py")]


def test_the_kernels_beside_a_gate_say_what_its_path_needs(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "The accumulators live in TMEM (tcgen05).")
    assert found.severity == "low"
    assert "every kernel module beside it (kernel.py) needs it" in found.consequence


def test_kernels_that_need_nothing_the_target_lacks_leave_the_gate_a_gap(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "A plain mma.sync tile loop.")
    assert found.severity == "medium"


def test_a_kernel_module_named_for_the_target_beside_it_is_no_evidence(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "The accumulators live in TMEM (tcgen05).", other="sm120_kernel.py")
    assert found.severity == "medium"


def test_a_kernel_module_another_op_of_the_package_imports_is_that_op_s(tmp_path: Path) -> None:
    """vLLM's `deepseek_v41/nvidia/ops/`: `mhc.py`'s gate beside `fused_wo_a.py` (tcgen05), which
    `o_proj.py` imports and `mhc.py` does not reach: no evidence for `mhc.py`."""
    files = {
        "eng/prims/gemm/api.py": _API + "\nfrom .mega import run_mega\n",
        "eng/prims/gemm/kernel.py": _KERNEL.format(doc="The accumulators live in TMEM (tcgen05)."),
        "eng/prims/gemm/o_proj.py": (
            "import torch\n\nfrom .kernel import gemm_kernel\n\n\ndef o_proj(x):\n"
            "    if torch.cuda.get_device_capability()[0] == 10:\n        return gemm_kernel(x, x)\n"
            "    return x @ x\n"
        ),
        "eng/prims/gemm/mega.py": "def run_mega():\n    return None\n",
    }
    (found,) = [f for f in _scan(tmp_path, files) if f.path.endswith("api.py")]
    assert found.severity == "medium"
