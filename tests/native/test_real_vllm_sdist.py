"""vLLM's sdist (csrc/, CMakeLists.txt, cmake/), downloaded at test time: its CMake arch lists and
native gates as `capgap scan` judges them for 12.0. Checked by hand against vllm 0.33.0:
CMakeLists.txt:829 `cuda_archs_loose_intersection(SCALED_MM_ARCHS "9.0a;" ...)` compiles the
c3x Hopper kernels (scaled_mm_c3x_sm90.cu ...: wgmma), line 553 MACHETE_ARCHS "9.0a" the
generated Machete kernels; csrc/kimi_k3/attn_res_kernel.cu gates a TMEM path on 10.x;
csrc/quantization/fp4/mxfp4_blockwise_moe_kernel.cu:381 sends 10.x (`version_num >= 100 &&
version_num < 120`) to the SM100 block-scaled grouped GEMM (KernelPtrArrayTmaWarpSpecialized1Sm
Mxf4Sm100: tcgen05) and every other GPU, 12.0 too, to "No compiled cutlass_mxfp4_group_mm kernel".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan
from tests.real_sdists import fetch_sdist


@pytest.fixture(scope="module")
def vllm_tree(wheel_cache: Path) -> Path:
    return fetch_sdist(wheel_cache, "vllm", "0.33.0", ("csrc", "CMakeLists.txt", "cmake"))


@pytest.mark.network
@pytest.mark.slow
def test_vllm_sdist_build_lists_and_gates(vllm_tree: Path) -> None:
    report = run_scan([str(vllm_tree)], ScanOptions(archs=(parse_arch("12.0"),), binaries=False))
    builds = {(f.path, f.line): f for f in report.findings if f.rule == "build-missing-arch"}
    scaled = builds[("CMakeLists.txt", 829)]
    assert scaled.symbol == "SCALED_MM_ARCHS" and scaled.present == ("9.0a",) and scaled.severity == "low"
    assert "wgmma" in scaled.consequence and "scaled_mm_c3x_sm90.cu" in scaled.consequence
    assert builds[("CMakeLists.txt", 553)].symbol == "MACHETE_ARCHS"
    native = [f for f in report.findings if f.extra.get("decision") == "preprocessor"]
    assert any(f.path == "csrc/kimi_k3/attn_res_kernel.cu" and "tmem" in f.consequence for f in native)
    assert report.targets[0].files > 300
    # host dispatch read through a local (`int32_t version_num = get_sm_version_num();`) and the
    # helper in csrc/cutlass_extensions/common.hpp (`major_capability * 10 + minor_capability`)
    mxfp4 = next(
        f
        for f in report.findings
        if f.path == "csrc/quantization/fp4/mxfp4_blockwise_moe_kernel.cu"
        and f.extra.get("decision") == "host-chain"
    )
    assert mxfp4.line == 381 and mxfp4.severity == "low" and mxfp4.present == ("10.0", "10.3", "11.0")
    assert "tcgen05" in mxfp4.consequence
