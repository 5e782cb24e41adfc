"""A flag built from another flag (`use_fused = is_blackwell() or hopper_fused`) is one decision,
judged where the last flag is read: the first flag alone is only part of the answer."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PLATFORM = """
    import torch

    def is_sm90():
        return torch.cuda.get_device_capability()[0] == 9

    def is_newer():
        return torch.cuda.get_device_capability()[0] in (10, 11, 12)
"""


def test_a_flag_the_target_gets_through_a_later_flag_is_no_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/stats.py": """
        from eng.plat import is_newer, is_sm90

        def stats(x):
            hopper_fused = is_sm90() and x.shape[0] > 32
            use_fused = x.is_cuda and (is_newer() or hopper_fused)
            if use_fused and x.ndim == 2:
                return fused_stats(x)
            return x.sum(-1)
    """,
        },
    )
    assert found == []


def test_a_flag_the_target_misses_is_judged_where_the_last_flag_is_read(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/stats.py": """
        from eng.plat import is_sm90

        def stats(x):
            hopper_fused = is_sm90() and x.shape[0] > 32
            use_fused = x.is_cuda and hopper_fused
            if use_fused:
                return fused_stats(x)
            return x.sum(-1)
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/stats.py", 6)]


def test_a_path_old_gpus_share_is_no_loss_when_the_target_moves_on_with_blackwell(tmp_path: Path) -> None:
    # Marlin W4A16 is what every GPU without FP4 runs; 12.0 is among the Blackwells here
    found = _scan(
        tmp_path,
        {
            "eng/moe.py": """
        import torch

        class Nvfp4MoE:
            def __init__(self):
                super().__init__()
                self.use_marlin = not torch.cuda.get_device_capability()[0] in (10, 11, 12)
                self.use_trtllm = not self.use_marlin and get_backend().is_trtllm()
    """,
        },
    )
    assert found == []


def test_an_error_blackwell_shares_is_still_a_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/split.py": """
        import torch

        def constraints(major):
            if major == 8:
                return 4, 2
            elif major == 9:
                return 8, 8
            raise ValueError(f"unsupported compute capability {major}")
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/split.py", 6)]


def test_a_comparison_with_an_arch_the_facts_lack_still_tells_known_archs_apart(tmp_path: Path) -> None:
    # (10, 7) is no arch of the facts; 12.0 compares False with it and gets the plain `return False`
    found = _scan(
        tmp_path,
        {
            "eng/compat.py": """
        def stat_supported(compute_capability: tuple[int, int]) -> bool:
            \"\"\"Whether kernels may take score maxima from LDTM.STAT (tcgen05.ld.red).\"\"\"
            if not dsl_ok():
                return False
            capability = tuple(compute_capability)
            if capability == (10, 3):
                return True
            if capability == (10, 7):
                return hasattr(prims, "tcgen05_ld_red")
            return False
    """,
        },
    )
    assert [f for f in found if f.severity != "low"] == []



_FUSED_MODEL = """
    import torch

    from eng.ops.fused import fused_rope_gemm


    def _fused_arch_supported() -> bool:
        return torch.cuda.get_device_capability()[0] == 10


    class Layer:
        def __init__(self, cfg):
            self.use_fused = (
                cfg.enabled
                and _fused_arch_supported()
                and cfg.rank == 1024
            )

        def forward(self, o, w):
            fuse = (
                self.use_fused and 0 < o.shape[0] <= 64
            )
            if o.shape[0] > 1:
                o = o.float()
            if fuse:
                return fused_rope_gemm(o, w)
            return o @ w
"""


def test_a_flag_kept_in_a_local_leads_to_what_its_branch_runs(tmp_path: Path) -> None:
    """`self.use_fused` is read into `fuse = (self.use_fused and ...)` (over lines), and `if fuse:`
    runs a JIT module whose CUDA source needs tcgen05: the exclusion is expected."""
    files = {
        "eng/models/model.py": _FUSED_MODEL,
        "eng/ops/fused.py": """
        from eng.jit.utils import load_jit

        def _jit_module():
            return load_jit("fused", cuda_files=["fused.cuh"])

        def fused_rope_gemm(x, w):
            return _jit_module().run(x, w)
    """,
        "eng/jit/csrc/fused.cuh": """
        // fused rope + GEMM on TMEM accumulators
        __global__ void fused_kernel() {
          asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(0));
        }
    """,
    }
    found = _scan(tmp_path / "tcgen05", files)
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/models/model.py", 12)]
    assert "fused.cuh (1 of 1 sources it names) in eng.ops.fused" in found[0].extra["evidence"]
    # the same kernel written with mma.sync alone: nothing says 12.0 could not run it
    cuh = files["eng/jit/csrc/fused.cuh"]
    cuh = cuh.replace("tcgen05.alloc.cta_group::1", "mma.sync").replace("TMEM accumulators", "registers")
    files["eng/jit/csrc/fused.cuh"] = cuh
    portable = _scan(tmp_path / "portable", files)
    assert _brief(portable) == [("gate-excludes-arch", "medium", "eng/models/model.py", 12)]
