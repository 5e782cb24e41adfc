"""Paths written for GPUs newer than the target (issue 14: "it must hold for any target arch"):
read on a B200 or an L40S, a branch, a registered kernel or a table only later GPUs get is theirs,
not a floor the target falls below. A floor is still judged as any exclusion is."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import facts_for
from capgap.judging.newer import left_alike, written_for_newer

from .test_decisions import _brief, _scan
from .test_kernel_registries import _registry


def test_only_newer_gpus_of_other_generations_left_out_alike_make_a_path_theirs() -> None:
    b200, l40s = facts_for("10.0"), facts_for("8.9")
    assert left_alike(["12.0", "12.1"], b200) == ["11.0"]  # Thor goes without it as B200 does
    assert left_alike(["11.0", "12.0", "12.1"], b200) == []  # a floor (`major >= 11`): judged as any
    assert left_alike(["9.0", "12.0"], b200) == []  # an older GPU gets it: the target may lack it
    assert left_alike(["10.3"], b200) == []  # its own generation's: judged elsewhere
    assert left_alike(["9.0"], l40s) == ["10.0", "10.3", "11.0", "12.0", "12.1"]
    assert left_alike(["9.0", "10.0", "10.3", "11.0", "12.0", "12.1"], l40s) == []  # `>= 90`
    assert written_for_newer(["12.1", "12.0"], b200) == (
        "written for GPUs newer than 10.0 (12.0, 12.1), not a floor it falls below: 11.0 go without it too"
    )
    # the target capgap is built for, newer than the code, is never judged here
    assert written_for_newer(["10.0", "10.3"], facts_for("12.0")) == ""


_BRANCHES = """
import torch

def pick():
    major, minor = torch.cuda.get_device_capability()
    if major == 12:
        return run_sm120_fp8_gemm()
    return run_fp8_gemm()

def fast():
    major, minor = torch.cuda.get_device_capability()
    if major >= 9:
        return fp8_fast_path()
    return slow_path()
"""


def test_a_branch_for_newer_gpus_is_low_on_an_older_target_and_a_floor_stays(tmp_path: Path) -> None:
    on_b200 = _scan(tmp_path / "b200", {"eng/gemm.py": _BRANCHES}, arch="10.0")
    assert _brief(on_b200) == [("gate-excludes-arch", "low", "eng/gemm.py", 5)]
    assert on_b200[0].consequence.startswith("expected: a path written for GPUs newer than 10.0 (12.0, 12.1)")
    assert on_b200[0].extra["evidence"].endswith("11.0 go without it too")
    on_ada = _scan(tmp_path / "ada", {"eng/gemm.py": _BRANCHES}, arch="8.9")
    # `major == 12` is the newer GPUs' path; `major >= 9` a floor Ada falls below: judged as any
    assert [(f.line, f.severity) for f in on_ada] == [(5, "low"), (11, "medium")]
    assert "written for GPUs newer" not in on_ada[1].consequence


def test_on_a_thor_the_newest_generation_s_path_is_written_for_a_design_without_tcgen05(
    tmp_path: Path,
) -> None:
    """No GPU newer than 11.0 goes without a 12.x-only path; every other tcgen05 GPU (10.x) does:
    SM120 kernels (sglang's fp8_blockwise_scaled_mm, judged expected on 11.0; its CuTe-DSL fused-A
    GEMM choice, not-a-gap) are written for consumer Blackwell, low on a Thor."""
    thor = facts_for("11.0")
    assert left_alike(["12.0", "12.1"], thor) == ["10.0", "10.3"]
    assert left_alike(["10.0", "12.0", "12.1"], thor) == []  # an older GPU gets it: judged as any
    found = _scan(tmp_path, {"eng/gemm.py": _BRANCHES}, arch="11.0")
    assert [(f.line, f.severity) for f in found] == [(5, "low")]
    assert found[0].extra["evidence"].endswith("10.0, 10.3 go without it too")


def test_a_kernel_registered_for_newer_gpus_only_is_low(tmp_path: Path) -> None:
    tree = {
        "eng/ops/__init__.py": _registry(
            'op="gemm.fp8", backend=KernelBackend.JIT, target="eng.ops.k:run",\n'
            "    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(12, 0), max_sm=(12, 9))})"
        ),
        "eng/ops/k.py": "def run(x):\n    return x\n",
    }
    on_b200 = _scan(tmp_path / "b200", tree, arch="10.0")
    assert _brief(on_b200) == [("registry-excludes-arch", "low", "eng/ops/__init__.py", 6)]
    expected = "expected: a kernel written for GPUs newer than 10.0 (12.0, 12.1)"
    assert on_b200[0].consequence.startswith(expected)
    on_hopper = _scan(tmp_path / "h100", tree, arch="9.0")  # Ada and Ampere aside, 10.x and 11.0 go without
    assert [f.severity for f in on_hopper] == ["low"]


def test_a_table_of_newer_gpus_only_is_low_on_an_older_target(tmp_path: Path) -> None:
    table = """
    import torch

    MAX_SIZES = {"9.0": 64, "10.0": 128}

    def max_size():
        cc = torch.cuda.get_device_capability()
        return MAX_SIZES.get(f"{cc[0]}.{cc[1]}")
    """
    on_ada = _scan(tmp_path / "ada", {"eng/ar.py": table}, arch="8.9")
    assert _brief(on_ada) == [("table-missing-arch", "low", "eng/ar.py", 3)]
    assert on_ada[0].consequence.startswith("expected: a table written for GPUs newer than 8.9 (9.0, 10.0)")
    on_rtx = _scan(tmp_path / "rtx", {"eng/ar.py": table}, arch="12.0")
    assert _brief(on_rtx) == [("table-missing-arch", "medium", "eng/ar.py", 3)]


def test_an_arm_the_target_s_generation_shares_is_its_own(tmp_path: Path) -> None:
    # `elif major == 10:` is B200's arm whether or not B300 (older than the 12.x owners) shares it
    found = _scan(
        tmp_path,
        {
            "eng/attn.py": """
        import torch

        from eng.utils import is_cuda, is_hip

        _is_cuda = is_cuda()
        if _is_cuda:
            CUDA_CAPABILITY = torch.cuda.get_device_capability()
        _is_hip = is_hip()

        def blocks(lq):
            if _is_hip:
                bm, bn = (128, 64)
            else:
                if _is_cuda and CUDA_CAPABILITY[0] == 12:
                    if lq <= 128:
                        bm, bn = (64, 128)
                    else:
                        bm, bn = (32, 32)
                elif _is_cuda and CUDA_CAPABILITY[0] == 10:
                    if lq <= 256:
                        bm, bn = (64, 64)
                    else:
                        bm, bn = (16, 64)
                elif _is_cuda and CUDA_CAPABILITY[0] >= 9:
                    bm, bn = (128, 64)
                else:
                    bm, bn = (64, 64)
            return bm, bn
    """
        },
        arch="10.0",
    )
    assert found == []
