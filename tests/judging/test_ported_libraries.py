"""gate-excludes-arch: a kernel library's name (DeepGEMM: wgmma / tcgen05 upstream) explains a
target left out of its path only where the tree holds no port of it to the target's family, or
the decision names a kernel of it that the port lacks."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_MOE = """
from eng.platform import current_platform


def permute(x, fmt):
    use_flat_layout = (
        current_platform.is_device_capability_family(90)
        or current_platform.is_device_capability_family(100)
    ) and fmt == deep_gemm.ScaleFmt.UE8M0
    return x, use_flat_layout
"""
_KERNEL = "// a kernel\n__global__ void k() {}\n"


def test_the_library_name_makes_the_exclusion_expected_without_a_port(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/moe.py": _MOE, "deep_gemm/impls/sm100_gemm_1d1d.cuh": _KERNEL})
    assert [(f.severity, f.line) for f in found] == [("low", 5)]
    assert "wgmma or tcgen05" in found[0].consequence


def test_a_port_of_the_library_to_the_target_in_the_tree_makes_it_a_gap(tmp_path: Path) -> None:
    tree = {
        "eng/moe.py": _MOE,
        "deep_gemm/impls/sm100_gemm_1d1d.cuh": _KERNEL,
        "deep_gemm/impls/sm120_gemm_1d1d.cuh": _KERNEL,
    }
    assert _brief(_scan(tmp_path, tree)) == [("gate-excludes-arch", "medium", "eng/moe.py", 5)]


def test_a_kernel_the_port_lacks_keeps_the_exclusion_expected(tmp_path: Path) -> None:
    only_sm100 = _MOE.replace("fmt == deep_gemm", "deep_gemm.mega_mhc(x) and fmt == deep_gemm")
    tree = {
        "eng/moe.py": only_sm100,
        "deep_gemm/impls/sm100_mega_mhc.cuh": _KERNEL,
        "deep_gemm/impls/sm120_gemm_1d1d.cuh": _KERNEL,
    }
    assert [(f.severity, f.line) for f in _scan(tmp_path, tree)] == [("low", 5)]


def test_an_engine_s_adapter_named_for_the_target_is_no_port(tmp_path: Path) -> None:
    adapter = (
        "import torch\n\ndef is_supported():\n    return torch.cuda.get_device_capability() == (12, 0)\n"
    )
    tree = {"eng/moe.py": _MOE, "eng/runner/deep_gemm_sm120.py": adapter}
    found = [f for f in _scan(tmp_path, tree) if f.path == "eng/moe.py"]
    assert [(f.severity, f.line) for f in found] == [("low", 5)]
