"""Whole decisions, one pattern per test: a small tree, the exact findings (or the silence) for 12.0.

Each case is a pattern an audit of real engines found judged wrong when a gate was read alone.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan


def _scan(tmp_path: Path, files: dict[str, str], arch: str = "12.0") -> list[Finding]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    options = ScanOptions(archs=(parse_arch(arch),), use_cache=False, binaries=False)
    return sorted(run_scan([str(tmp_path)], options).findings, key=lambda f: (f.path, f.line))


def _brief(findings: list[Finding]) -> list[tuple[str, str, str, int]]:
    return [(f.rule, f.severity, f.path, f.line) for f in findings]


def test_an_elif_of_the_target_s_own_is_no_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/tiles.py": """
        import torch

        def tiles():
            major, minor = torch.cuda.get_device_capability()
            if major == 8 and minor == 0:
                cfg = (4, 8)
            elif major == 9:
                cfg = (4, 8)
            elif major == 12 and minor == 0:
                cfg = (8, 8)
            else:
                cfg = (1, 1)
            return cfg
    """
        },
    )
    assert found == []


def test_a_run_of_guard_clauses_is_one_decision(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/arch.py": """
        import torch

        def suffix():
            major, minor = torch.cuda.get_device_capability()
            if major == 9:
                return "a"
            if major == 12:
                return "f"
            if major >= 10:
                return "a"
            return ""
    """
        },
    )
    assert found == []


def test_being_left_out_of_a_restriction_is_no_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/quant.py": """
        import torch

        def unsupported_methods():
            unsupported = []
            major = torch.cuda.get_device_capability()[0]
            if major == 9:
                unsupported.append("nunchaku")
            return unsupported

        def splits():
            if torch.cuda.get_device_capability() == (9, 0):
                raise ValueError("Hopper is not supported by this kernel")
            return 4
    """
        },
    )
    assert found == []


def test_a_range_that_admits_the_family_is_read_exactly(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/fp4.py": """
        import torch

        def can_use():
            cc = torch.cuda.get_device_capability()
            sm = cc[0] * 10 + cc[1]
            if sm not in (100, 103) and not (120 <= sm < 130):
                return False
            return True

        def pick(x):
            if can_use():
                return fast(x)
            return slow(x)
    """
        },
    )
    assert found == []


def test_platform_attributes_resolve_through_a_probe_table(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/utils.py": """
            import torch

            def is_sm90_supported():
                return torch.cuda.get_device_capability()[0] == 9
        """,
            "eng/platform.py": """
            _PROBES = {"is_sm90": "is_sm90_supported", "is_cuda": "is_cuda"}

            class Platform:
                def __getattr__(self, name):
                    from eng import utils
                    return getattr(utils, _PROBES[name])()

            def get_platform():
                return Platform()
        """,
            "eng/gemm.py": """
            from eng.platform import get_platform

            def kernel(config):
                hopper_tuned = get_platform().is_sm90 and config.get("SWAP_AB", False)
                if hopper_tuned:
                    return swap_ab_kernel
                return plain_kernel
        """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/gemm.py", 5)]
    assert found[0].symbol == "hopper_tuned"
    assert found[0].extra["instead"] == "carries on (returns plain_kernel)"


def test_an_allow_list_from_another_module_decides(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/caps.py": "SUPPORTED_CUDA_ARCHS = ((9, 0), (10, 0), (10, 3))\n",
            "eng/select.py": """
            import torch

            from eng.caps import SUPPORTED_CUDA_ARCHS

            def topk(x):
                if torch.cuda.get_device_capability() not in SUPPORTED_CUDA_ARCHS:
                    return None
                return deep_select(x)
        """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/select.py", 6)]
    assert found[0].present == ("9.0", "10.0", "10.3")


def test_a_helper_s_guard_clauses_and_keyword_arguments_are_followed(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/dit.py": """
        import torch

        def is_blackwell():
            return torch.cuda.get_device_capability()[0] == 10

        def is_hopper():
            return torch.cuda.get_device_capability() == (9, 0)

        def _can_fuse(*, is_blackwell: bool, is_hopper: bool, compiled: bool, tp: int) -> bool:
            if compiled:
                return False
            if is_blackwell:
                return True
            if not is_hopper:
                return False
            return tp == 1

        def forward(self, x):
            fused = x.ndim == 4 and _can_fuse(
                is_blackwell=is_blackwell(), is_hopper=is_hopper(), compiled=self.compiled, tp=self.tp
            )
            if fused:
                return fused_rope(x)
            return rope(x)
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/dit.py", 22)]
    assert set(found[0].present) == {"9.0", "10.0", "10.3"}


def test_an_or_of_unknowns_still_sends_the_target_to_the_fallback(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/rope.py": """
        import torch

        def qk_rope(q, k):
            if (
                torch.compiler.is_compiling()
                or not q.is_cuda
                or torch.cuda.get_device_capability(q.device) != (9, 0)
                or q.ndim != 4
            ):
                return reference(q, k)
            return fused(q, k)
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/rope.py", 4)]
    assert found[0].consequence == (
        "12.0 never gets this path (carries on (returns fused(q, k))); it returns reference(q, k) instead"
    )


def test_an_arch_named_kernel_class_is_evidence_of_a_need(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/lora.py": """
        import torch

        def grouped_gemm():
            major = torch.cuda.get_device_capability()[0]
            if major >= 10:
                return GroupedGemmKernelSm100Fp8()
            if major == 9:
                return GroupedGemmKernelSm90Fp8()
            raise NotImplementedError("needs SM90 or newer")
    """
        },
    )
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/lora.py", 5)]
    assert found[0].extra["evidence"] == "'GroupedGemmKernelSm100Fp8'"


def test_a_kernel_module_s_imports_explain_its_refusal(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/bf16_gemm.py": """
        import torch
        from cutlass.cute.nvgpu import tcgen05

        def is_sm100_supported():
            return torch.cuda.get_device_capability()[0] == 10

        def gemm(a, b):
            if not is_sm100_supported():
                raise RuntimeError("cutedsl_bf16_gemm requires an SM10x GPU")
            return _run(a, b)
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/bf16_gemm.py", 8)]
    assert found[0].extra["evidence"] == "'tcgen05' imported at line 2"


def test_an_earlier_guard_narrows_what_later_decisions_see(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/sparse.py": """
        import torch

        def backend():
            cap = torch.cuda.get_device_capability()
            if cap not in ((9, 0), (10, 0), (12, 0)):
                raise ValueError("sparse attention needs SM90, SM100 or SM120")
            if cap == (9, 0):
                return load_sm90()
            elif cap == (10, 0):
                return load_sm100()
            return load_sm120()
    """
        },
    )
    # only the guard is judged (11.0 and 10.3 are refused there, 12.0 is not): no finding for 12.0
    assert found == []
    on_10_3 = _scan(tmp_path / "b", {"eng/sparse.py": (tmp_path / "eng/sparse.py").read_text()}, "10.3")
    assert _brief(on_10_3) == [("gate-excludes-arch", "medium", "eng/sparse.py", 5)]


def test_an_assert_turns_the_target_away_from_what_follows_it(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/fwd.py": """
        import torch

        def forward(q):
            cc = torch.cuda.get_device_capability()[0]
            assert cc in [9, 10, 11], "Unsupported compute capability. Supported: 9.x, 10.x, 11.x"
            n_block = 128
            if cc == 10:
                n_block = 192
            return n_block
    """
        },
    )
    # 12.0 fails the assert: the tile choice below it is one 12.0 never reaches, so only the
    # assert is judged
    assert [f.line for f in found] == [5]


def test_a_flag_a_later_test_reads_is_judged_once_there(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/norm.py": """
        import torch

        def launch(n):
            major, minor = torch.cuda.get_device_capability()
            is_sm103 = major == 10 and minor == 3
            warps = 16 if is_sm103 else 8
            return warps
    """
        },
    )
    # one finding, where the flag is read; per-arch numbers are tuning, so low
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/norm.py", 6)]


def test_tests_and_model_files_carry_where_they_sit(tmp_path: Path) -> None:
    gate = """
        import torch

        def pick():
            if torch.cuda.get_device_capability() == (9, 0):
                return fast()
            return slow()
    """
    found = _scan(tmp_path, {"eng/tests/test_pick.py": gate, "eng/models/llama.py": gate})
    where = {f.path: (f.severity, f.extra["where"], f.extra.get("model")) for f in found}
    assert where == {
        "eng/models/llama.py": ("medium", "runtime", "llama"),
        "eng/tests/test_pick.py": ("low", "test", None),
    }


def test_a_decorator_listing_capabilities_is_a_decision(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/router.py": """
        from eng.utils import supported_compute_capability

        @supported_compute_capability([90, 100, 103])
        def _router_gemm_checks(a, b):
            return a.shape[1] == b.shape[0]

        @supported_compute_capability([80, 90, 100, 120])
        def _rmsnorm_checks(x):
            return x.is_contiguous()
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 3)]
    assert found[0].present == ("9.0", "10.0", "10.3")
    assert found[0].extra["instead"] == "refuses _router_gemm_checks(): 'unsupported compute capability'"


_ROUTER_WITH_A_TCGEN05_SECTION = """
        from eng.utils import supported_compute_capability

        # TODO: other compute capabilities may be supported but are untested
        @supported_compute_capability([90, 100, 103])
        def _router_gemm_checks(a, b):
            return a.shape[1] == b.shape[0]

        def router_gemm(a, b):
            return a @ b

        # tinygemm2_tcgen05: generated tcgen05 programs for the biased small GEMM
        def tinygemm2_tcgen05(a, b):
            return a @ b
    """


def test_a_gate_said_untested_outweighs_a_tcgen05_comment_elsewhere_in_the_module(tmp_path: Path) -> None:
    # the module's comments say tcgen05 (about another section), but the words at the gate say the
    # archs it leaves out may run it, untested: the loss of an untested exclusion, medium
    found = _scan(tmp_path, {"eng/router.py": _ROUTER_WITH_A_TCGEN05_SECTION})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 4)]


def test_without_words_at_the_gate_a_tcgen05_comment_in_the_module_explains_it(tmp_path: Path) -> None:
    text = _ROUTER_WITH_A_TCGEN05_SECTION.replace(
        "        # TODO: other compute capabilities may be supported but are untested\n", ""
    )
    found = _scan(tmp_path, {"eng/router.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/router.py", 3)]
    assert "tcgen05" in found[0].consequence


def test_an_arch_list_in_a_message_or_an_f_string_is_no_build_list(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/build.py": """
        import os

        import torch

        def set_arch():
            capability = torch.cuda.get_device_capability()
            arch = f"{capability[0]}.{capability[1]}"
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{arch}{'+PTX' if arch == '9.0' else ''}"

        def need_pplx():
            raise ImportError(
                "pplx-kernels is not installed: build it with "
                "`TORCH_CUDA_ARCH_LIST=9.0a+PTX python3 setup.py bdist_wheel`"
            )

        os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0 9.0"
    """
        },
    )
    assert [(f.rule, f.line, f.missing) for f in found if f.rule == "build-missing-arch"] == [
        ("build-missing-arch", 16, "12.0")
    ]


def test_an_arm_written_for_the_target_is_its_own_though_hopper_shares_it(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/xqa.py": """
        from eng.platforms import current_platform

        def use_trtllm(is_prefill):
            if not artifactory_reachable():
                return False
            # SM90 and SM12x have XQA decode only.
            if current_platform.is_device_capability(
                90
            ) or current_platform.is_device_capability_family(120):
                return not is_prefill
            return current_platform.is_device_capability_family(100)
    """
        },
    )
    assert found == []


def test_returning_an_empty_list_and_split_k_one_are_restrictions(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/warm.py": """
        from eng.platforms import current_platform

        def warmup_shapes(cfg):
            if current_platform.is_device_capability_family(110):
                return []
            return [cfg]

        def splits(n):
            split_k = max(1, n)
            if not current_platform.is_device_capability((12, 0)):
                split_k = 1
            return split_k
    """
        },
    )
    assert found == []


def test_a_hopper_only_preference_blackwell_does_not_share_is_no_loss(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/moe.py": """
        from eng.platforms import current_platform

        def swap_ab():
            # swapping A and B pays off for wgmma's 64-row tiles
            return current_platform.is_device_capability(90)

        def order(backends):
            if current_platform.is_device_capability_family(90):
                _move_to_back(backends, "FLASHINFER")
            return backends

        def fused_rope(q):
            if current_platform.is_device_capability(90):
                return fused_rope_triton(q)
            return reference_rope(q)
    """
        },
    )
    # the reordering Hopper alone gets (10.x keeps 12.0's order too) is its tuning: low; the fused
    # Triton path Hopper alone gets is still a path 12.0 could run
    assert _brief(found) == [
        ("gate-excludes-arch", "low", "eng/moe.py", 8),
        ("gate-excludes-arch", "medium", "eng/moe.py", 13),
    ]
    assert found[0].extra.get("tuning") is True


def test_a_predicate_that_says_yes_to_the_target_loses_nothing(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/dg.py": """
        from eng.platforms import current_platform

        def supports_next_n(next_n):
            if current_platform.is_device_capability_family(90):
                return next_n in (1, 2, 4)
            return True
    """
        },
    )
    assert found == []


def test_a_decision_in_an_arm_the_target_does_not_take_is_not_its_own(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/kv.py": """
        from eng.platforms import get_platform

        def dequant(x):
            if get_platform().is_sm100 or get_platform().is_sm120:
                return fast_dequant(x)
            else:
                assert get_platform().is_sm90, "needs SM100/SM120 or the SM90 fallback"
                return slow_dequant(x)
    """,
            "eng/platforms.py": """
        import torch

        class Platform:
            @property
            def is_sm90(self):
                return torch.cuda.get_device_capability() == (9, 0)

            @property
            def is_sm100(self):
                return torch.cuda.get_device_capability()[0] == 10

            @property
            def is_sm120(self):
                return torch.cuda.get_device_capability()[0] == 12

        def get_platform():
            return Platform()
    """,
        },
    )
    assert [f for f in found if f.path == "eng/kv.py"] == []


def test_a_cuda_toolkit_floor_and_a_static_platform_check_hold_on_a_blackwell_stack(tmp_path: Path) -> None:
    # sglang's probes: `is_cuda_static()` and `torch.version.cuda >= (12, 8)` hold wherever 12.0
    # runs, so `is_sm100 or is_sm120` takes 12.0 and the SM90 fallback's assert is not its
    found = _scan(
        tmp_path,
        {
            "eng/common.py": """
        from functools import lru_cache, partial
        import torch

        def _check(majors, cuda_version):
            if not is_cuda_static():
                return False
            major = torch.cuda.get_device_capability()[0]
            return major in majors and tuple(map(int, torch.version.cuda.split(".")[:2])) >= cuda_version

        is_sm120_supported = lru_cache(maxsize=1)(partial(_check, majors=[12], cuda_version=(12, 8)))
        is_sm100_supported = lru_cache(maxsize=1)(partial(_check, majors=[10], cuda_version=(12, 8)))
        is_sm90_supported = lru_cache(maxsize=1)(partial(_check, majors=[9], cuda_version=(12, 3)))

        def dequant(x):
            if is_sm100_supported() or is_sm120_supported():
                return fast(x)
            assert is_sm90_supported(), "needs SM100/SM120 or the SM90 fallback"
            return slow(x)
    """
        },
    )
    assert found == []


def test_a_message_s_wording_and_a_branch_that_only_logs_pick_no_path(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/load.py": """
        import logging
        import torch

        logger = logging.getLogger(__name__)

        def load_kernel(name):
            cap = torch.cuda.get_device_capability()
            if name not in KERNELS:
                raise ImportError(
                    f"no {'sm120 blk64' if cap == (12, 0) else 'sm90 blk128'} kernel named {name}"
                )
            return KERNELS[name]

        def warn_quant(quant):
            if torch.cuda.get_device_capability()[0] != 10:
                logger.warning("%s quantization is not fully optimized yet", quant)
    """
        },
    )
    assert found == []


def test_a_path_that_names_the_target_is_its_own(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/bsa.py": """
        import torch

        def load_block_sparse():
            cap = torch.cuda.get_device_capability()
            if cap in ((9, 0), (10, 0), (10, 3)):
                from eng.cute import block_sparse_fwd
                return block_sparse_fwd
            return load_bsa_attn_sm120_blk64_fwd()
    """
        },
    )
    assert found == []


def test_per_arch_numbers_are_tuning_rated_low(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/tiles.py": """
        import torch

        def launch(n):
            major, minor = torch.cuda.get_device_capability()
            if (major, minor) == (10, 3):
                return (32, 1)
            if major == 9:
                return (16, 2)
            return (64, 2)
    """
        },
    )
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    assert found[0].extra["tuning"] is True
    assert found[0].consequence.startswith("tuning only: 10.3 returns (32, 1), 12.0 carries on")


def test_a_flag_is_judged_by_the_lines_that_read_it_and_an_arch_named_flag_is_a_predicate(
    tmp_path: Path,
) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/lamport.py": """
        import torch

        class Comm:
            def __init__(self, cross_node):
                self.use_pdl = torch.cuda.get_device_capability()[0] >= 9
                if cross_node:
                    from flashinfer.comm.mnnvl import McastGPUBuffer
                    self.buf = McastGPUBuffer()

        def gemm(a, runners):
            use_sm_100f = is_sm100f_supported(a.device)
            runners.append(tgv_runner(a.dtype, use_sm_100f))
            return runners

        def is_sm100f_supported(device):
            return torch.cuda.get_device_capability(device)[0] == 10
    """
        },
    )
    assert [f for f in found if f.severity != "low"] == []


def test_an_assert_that_says_what_it_needs_is_an_explained_refusal(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/dllm.py": """
        import torch

        class Fa4Graphs:
            def __init__(self, backend):
                assert torch.cuda.get_device_capability()[0] == 10, (
                    "dLLM FA4 D256/D512 requires an SM100-family GPU."
                )
                self.backend = backend
    """
        },
    )
    # the refusal names the arch the path requires and nothing read says otherwise: what that
    # arch has and 12.0 lacks (tcgen05) is the evidence, so the finding is an expected one (low)
    assert [(f.severity, f.message, f.extra["evidence"]) for f in found] == [
        (
            "low",
            "get_device_capability leaves 12.0 out: 10.0, 10.3 continues, 12.0 fails the assert "
            "'dLLM FA4 D256/D512 requires an SM100-family GPU.'",
            "the refusal naming 10.0 as what it requires ('dLLM FA4 D256/D512 requires an SM100-family GPU')",
        )
    ]


_REASON = """
        import torch

        def _unavailable_reason() -> str:
            if not torch.cuda.is_available():
                return "CUDA is not available"
            cap = torch.cuda.get_device_capability()
            if cap[0] < 9:
                return f"GPU SM {{cap[0]}}.{{cap[1]}} < 9.0 (requires Hopper or newer)"
            return {last}
    """


def test_a_function_that_only_words_why_a_path_is_off_is_no_gate(tmp_path: Path) -> None:
    """sglang's LPLB `_unavailable_reason()`: every GPU is told a reason; the path is turned on or
    off (and judged) elsewhere."""
    last = '"Math-DX cuBLASDx headers not found: install nvidia-mathdx"'
    assert _scan(tmp_path, {"eng/solver.py": _REASON.format(last=last)}, arch="8.9") == []


def test_a_refusal_that_says_only_what_was_verified_names_no_need(tmp_path: Path) -> None:
    """sglang's h3 ComfyUI profile: "currently verified only on Hopper" says what was tried, not
    that the path needs Hopper's wgmma (it swaps in torch-level RMSNorm/RoPE): a refusal of an
    opt-in mode the target could run, medium."""
    found = _scan(
        tmp_path,
        {
            "eng/h3.py": """
        import torch

        def enable_profile(name):
            if torch.cuda.get_device_capability() != (9, 0):
                raise ValueError(f"{name} is currently verified only on Hopper")
            return name
    """
        },
    )
    assert [(f.severity, f.extra.get("evidence")) for f in found] == [("medium", None)]


def test_a_refusal_that_names_no_arch_or_spares_a_same_family_sibling_stays_medium(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/pdmux.py": """
        import torch

        def partition():
            major, minor = torch.cuda.get_device_capability()
            if major == 9:
                return (8, 8)
            raise ValueError(f"Unsupported compute capability: {major}.{minor}")
    """,
            "eng/gb10.py": """
        import torch

        def setup():
            cap = torch.cuda.get_device_capability()
            if cap not in ((9, 0), (12, 1)):
                raise RuntimeError("fused norm requires SM90 or SM121")
            return cap
    """,
        },
    )
    # a refusal that names no requirement says nothing of what the path needs; one that spares
    # 12.1, a GPU of the target's own generation, is no feature 12.0 lacks
    assert [(f.path, f.severity) for f in found] == [("eng/gb10.py", "medium"), ("eng/pdmux.py", "medium")]


def test_a_refusal_in_a_module_whose_kernels_were_read_looks_portable(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/gated.py": """
        import torch
        from .jit.gated import gen_gated_module

        def _validate(x):
            if torch.cuda.get_device_capability()[0] != 10:
                raise RuntimeError("fused gated quantization requires SM100 or SM103")
            return gen_gated_module().run(x)

        def gated(x):
            return _validate(x)
    """,
            "eng/jit/gated.py": """
        def gen_gated_module():
            flags = ["-gencode=arch=compute_100a,code=sm_100a"]
            return build("gated", sources=["gated_kernel.cu", "gated_binding.cu"], flags=flags)
    """,
            "eng/csrc/gated_kernel.cu": "__global__ void gated(float* x) { x[threadIdx.x] *= 2.f; }\n",
            "eng/csrc/gated_binding.cu": "void bind() {}\n",
        },
    )
    # the JIT module named after it compiles sources that use nothing 12.0 lacks: the refusal is
    # a path that looks portable, a medium gap, and the finding says which kernels were read
    found = [f for f in found if f.path == "eng/gated.py"]
    assert [(f.path, f.severity) for f in found] == [("eng/gated.py", "medium")]
    assert found[0].extra["evidence"].startswith("2 of the sources it names (eng/csrc/gated_")


def test_a_refusal_naming_hopper_over_a_path_whose_imported_kernels_were_read_looks_portable(
    tmp_path: Path,
) -> None:
    files = {
        "eng/unquant.py": """
        import torch

        _gemv = None

        def setup(backend):
            global _gemv
            if backend == "gemv":
                if torch.cuda.get_device_capability()[0] != 9:
                    raise ValueError("--gemm-backend gemv requires SM90 (Hopper)")
                from eng.ops.hopper_gemv import hopper_gemv

                _gemv = hopper_gemv
    """,
        "eng/ops/hopper_gemv.py": """
        from eng.jit import load_jit

        def hopper_gemv(x, w):
            return load_jit("hopper_gemv", cuda_files=["gemm/hopper_gemv.cuh"]).run(x, w)
    """,
        "eng/jit/csrc/gemm/hopper_gemv.cuh": "__global__ void gemv(float* y) { y[threadIdx.x] += 1.f; }\n",
    }
    found = [f for f in _scan(tmp_path, files) if f.path == "eng/unquant.py"]
    # the refusal names Hopper, but the code the Hopper path imports was read: a warp-per-row GEMV
    # with nothing 12.0 lacks, so the words name the arch that was tried, not a need (medium)
    assert [(f.rule, f.severity, f.line) for f in found] == [("gate-excludes-arch", "medium", 8)]
    assert "looks portable" in found[0].consequence


def test_cuda_toolkit_floors_hold_and_ceilings_fail_on_a_blackwell_stack() -> None:
    import ast

    from capgap.judging.symbolic import Context, evaluate

    ctx = Context(lambda name: None, lambda name: None)
    answers = {
        'torch.version.cuda >= "12.8"': True,
        "cuda_version < (12, 9)": False,
        "(12, 8) <= torch_cuda_version": True,
        'is_cuda_version_at_least("12.9")': True,
        "cuda_version <= (12, 8)": False,
        "get_cuda_version() >= (13, 0)": None,  # newer than what 12.0 needs: unknown
    }
    for text, want in answers.items():
        sym = evaluate(ast.parse(text, mode="eval").body, ctx)
        assert (sym.value if sym.kind == "const" else None) == want, text


def test_a_table_keyed_by_capability_as_an_int_is_found_with_a_key_the_facts_lack(tmp_path: Path) -> None:
    # vLLM's FI_ALLREDUCE_FUSION_MAX_SIZE_MB: `90: {...}` keys (one of them 107, an arch the facts
    # do not list), read in another module through `capability.to_int()`
    found = _scan(
        tmp_path,
        {
            "eng/fusion.py": """
        # Max size of the input tensor per world size per device capability
        FI_MAX_SIZE_MB: dict[int, dict[int, float]] = {
            90: {2: 64, 4: 2},
            100: {2: 64, 4: 32},
            107: {2: 64, 4: 64},
        }
    """,
            "eng/config.py": """
        from eng.platforms import current_platform

        def default_max_size():
            from eng.fusion import FI_MAX_SIZE_MB

            capability = current_platform.get_device_capability()
            if capability is None:
                return {}
            return FI_MAX_SIZE_MB.get(capability.to_int(), {})
    """,
        },
    )
    assert [(f.rule, f.severity, f.path, f.line, f.missing) for f in found] == [
        ("table-missing-arch", "medium", "eng/fusion.py", 2, "120")
    ]


def test_sentences_chosen_by_arch_word_a_log_line_and_a_reason_that_turns_a_path_off_refuses(
    tmp_path: Path,
) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/moe.py": """
        import logging
        import torch

        logger = logging.getLogger(__name__)

        def pick(use_blackwell_triton):
            is_sm100 = torch.cuda.get_device_capability()[0] == 10
            why = "SM100/SM103 auto default" if is_sm100 else "moe_runner_backend=triton"
            logger.info("MoE runner: %s", why)

        def fusion_blocker():
            if torch.cuda.get_device_capability() == (9, 0):
                return "Hopper marlin: shared-expert fusion off by default"
            return None
    """
        },
    )
    assert found == []


def test_a_sibling_sent_to_a_portable_fallback_is_no_path_the_target_lost(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/model_overrides/falcon.py": """
        from eng.platform import get_platform

        def overrides():
            if get_platform().is_sm100:
                return {"attention_backend": "triton"}
            return {}
    """,
            "eng/platform.py": """
        import torch

        class Platform:
            @property
            def is_sm100(self):
                return torch.cuda.get_device_capability()[0] == 10

        def get_platform():
            return Platform()
    """,
        },
    )
    # SM100 is worked around onto Triton, which runs anywhere: 12.0 loses nothing by keeping its default
    assert found == []


def test_a_portable_fallback_set_by_key_within_the_generation_is_no_path_of_its_own(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/model_overrides/hybrid.py": """
        import torch

        def overrides(cfg):
            out = {}
            major = torch.cuda.get_device_capability()[0]
            if major >= 10:
                if major == 10:
                    out["attention_backend"] = "trtllm_mha"
                else:
                    out["attention_backend"] = "triton"
            return out
    """,
        },
    )
    # only Blackwell GPUs reach the else, but all it picks is Triton, which runs anywhere: a fallback
    # (the dict key is no pick), so 12.0 is left out of the sibling's backend
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/model_overrides/hybrid.py", 7)]


def test_an_arm_the_owners_may_take_too_is_not_the_target_s_own(tmp_path: Path) -> None:
    text = """
        import torch

        def overrides(cfg):
            out = {}
            major = torch.cuda.get_device_capability()[0]
            if major >= 10:
                if cfg.speculative is not None:
                    out["draft"] = cfg.speculative.upper()
                elif major == 10:
                    out["attention_backend"] = "trtllm_mha"
            return out
    """
    found = _scan(tmp_path, {"eng/model_overrides/hybrid.py": text})
    # 12.0 may take the speculative arm as 10.x may: without it, 10.x gets a backend and 12.0 nothing
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/model_overrides/hybrid.py", 9)]
    # an arm written for the target (its test holds for it alone) stays its own
    own = text.replace("if cfg.speculative is not None:", "if cfg.speculative is not None or major == 12:")
    assert _scan(tmp_path / "own", {"eng/model_overrides/hybrid.py": own}) == []


def test_vendored_libraries_are_not_the_engine_s_runtime(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/data/cutlass/python/op.py": """
        import torch

        def tag():
            cc = torch.cuda.get_device_capability()
            if cc[0] == 9:
                return "sm90_kernel"
            return "sm80_kernel"
    """
        },
    )
    assert [(f.severity, f.extra["where"]) for f in found] == [("low", "vendored")]


_SM100_TAG = """
    import torch

    def tag():
        cc = torch.cuda.get_device_capability()
        if cc[0] == 10:
            return fused_tag()
        return None
"""


def _where_and_severity(tmp_path: Path, paths: dict[str, str]) -> None:
    """The same 10.x-only gate in each of `paths`: the `extra.where` each path gets, rated low
    unless it is runtime code."""
    for i, (path, where) in enumerate(paths.items()):
        found = _scan(tmp_path / str(i), {path: _SM100_TAG})
        assert [(f.extra["where"], f.severity) for f in found] == [
            (where, "medium" if where == "runtime" else "low")
        ], path


def test_training_modules_are_backward_code_by_their_names(tmp_path: Path) -> None:
    """A module or directory named for training (`_train`, `bwd`, `backward`, `loss` as whole
    words) serves no inference server: rated low as backward code. `post_training/` (serving RL
    rollouts) and a word that only starts with one (`lossless`) stay runtime."""
    paths = {
        "eng/rmsnorm_train_backend/jit.py": "backward",
        "eng/ops/flash_bwd.py": "backward",
        "eng/lm_head_loss/backend.py": "backward",
        "eng/post_training/rollout.py": "runtime",
        "eng/ops/lossless.py": "runtime",
    }
    _where_and_severity(tmp_path, paths)


def test_modules_for_other_devices_are_not_judged_as_cuda_code(tmp_path: Path) -> None:
    """`platforms/rocm.py`, `models/<name>/amd/`, `rocm_aiter_fa.py`: what they call a capability is
    another device's; their findings are low and leave the default text output. `chip_select.py`
    (a word that holds `hip`) stays runtime."""
    paths = {
        "eng/platforms/rocm.py": "other-device",
        "eng/models/inkling/amd/moe.py": "other-device",
        "eng/backends/rocm_aiter_fa.py": "other-device",
        "eng/layers/chip_select.py": "runtime",
    }
    _where_and_severity(tmp_path, paths)


def test_a_restriction_all_of_blackwell_shares_is_the_generation_s_rule(tmp_path: Path) -> None:
    files = {
        "eng/registry.py": """
        import torch

        def is_blackwell():
            return torch.cuda.get_device_capability()[0] in [10, 11, 12]

        def backend_for_hybrid(args):
            if is_blackwell():
                assert args.attention_backend in ("triton", "trtllm_mha"), "triton or trtllm_mha only"
            return args.attention_backend
    """
    }
    found = _scan(tmp_path, files)
    # 12.0 is restricted as every 10.x GPU is; only Hopper escapes: a low note, not a lost path
    assert [(f.severity, f.line) for f in found] == [("low", 7)]
    assert found[0].consequence.endswith("every 10.x GPU is restricted as 12.0 is")
    # the same restriction on a module whose own Triton kernel needs nothing 12.0 lacks stays a loss
    kernel = {
        "eng/rope.py": """
        import torch
        import triton

        @triton.jit
        def _rope(x):
            pass

        def rope(q):
            if torch.cuda.get_device_capability(q.device) != (9, 0):
                return None
            return _rope[(1,)](q)
    """
    }
    assert [f.severity for f in _scan(tmp_path / "k", kernel)] == ["medium"]


def test_a_backend_chosen_by_name_the_target_cannot_run_is_high(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/overrides.py": """
        import torch

        def overrides(args):
            out = {}
            if args.attention_backend is None:
                sm = torch.cuda.get_device_capability()[0] * 10
                if sm == 100:
                    out["attention_backend"] = "trtllm_mha"
                elif sm >= 80:
                    out["attention_backend"] = "fa3"
                else:
                    out["attention_backend"] = "triton"
            return out
    """
        },
    )
    # 12.0 is sent to FA3 (Hopper's wgmma kernels) by the engine's own default: it fails on first use
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert [(f.severity, f.line) for f in admits] == [("high", 9)]
    assert admits[0].extra["evidence"] == "'fa3' (line 10)"


def test_an_inline_lookup_is_a_table(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/lora.py": """
        import torch

        def overlap(x, t):
            device_major = torch.cuda.get_device_capability(x.device)[0]
            max_overlap_tokens = {9: 32, 10: 16}.get(device_major, 0)
            return t <= max_overlap_tokens
    """
        },
    )
    assert [(f.rule, f.severity, f.symbol, f.line) for f in found] == [
        ("table-missing-arch", "medium", "{9: 32, 10: 16}", 5)
    ]
    assert found[0].consequence.startswith(".get() returns 0 on 12.0")


def test_an_admitted_path_that_checks_the_feature_itself_is_no_crash(tmp_path: Path) -> None:
    files = {
        "eng/symm.py": """
        import torch

        class SymmMem:
            def __init__(self, buf, group):
                cap = torch.cuda.get_device_capability()[0]
                if cap < 9:
                    self.disabled = True
                    return
                handle = rendezvous(buf, group)  # a multimem all-reduce over NVLS multicast
                if handle.multicast_ptr == 0:
                    self.disabled = True
                    return
                self.disabled = False
    """
    }
    # 12.0 (no NVLS multicast) is admitted, but the path checks multicast itself and turns off
    assert [f for f in _scan(tmp_path, files) if f.rule == "gate-admits-unsupported"] == []
    bare = {
        "eng/symm.py": files["eng/symm.py"].replace("if handle.multicast_ptr == 0:", "if handle is None:")
    }
    assert [f.rule for f in _scan(tmp_path / "b", bare)] == ["gate-admits-unsupported"]


def test_handing_a_library_its_per_arch_knobs_is_tuning(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/mxfp4.py": """
        import torch

        def setup(opt_flags):
            if torch.cuda.get_device_capability()[0] == 10:
                opt_flags.update_opt_flags_constraints({"is_persistent": True})
    """
        },
    )
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]


def test_numbers_a_sibling_gets_where_the_target_keeps_the_defaults_are_tuning(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/norm.py": """
        import torch

        def launch(d):
            b_t = 1
            if torch.cuda.get_device_capability() == (10, 0):
                b_t = 2
            return b_t

        def thresholds():
            if torch.cuda.get_device_capability()[0] == 10:
                return (36864, 4096)
            return (None, None)
    """
        },
    )
    # a B200 launch override, GB200-measured thresholds: 12.0 keeps the kernel's defaults
    brief = [(f.line, f.severity, f.extra.get("tuning")) for f in found]
    assert brief == [(5, "low", True), (10, "low", True)]


def test_a_limit_to_what_was_validated_is_no_generation_rule(tmp_path: Path) -> None:
    helper = """
        import torch

        def _gemm_supported(capability):
            \"\"\"Limit the prototype to the SM90 architecture validated end to end.\"\"\"
            return capability == (9, 0)

        def why_not(layer):
            capability = torch.cuda.get_device_capability()
            if not _gemm_supported(capability):
                return f"capability {capability} is unsupported"
            return None
    """
    found = _scan(tmp_path, {"eng/gemm.py": helper})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/gemm.py", 9)]
    assert "validated, not all that can run it (Limit the prototype" in found[0].consequence
    # the same gate without those words: Hopper's own restriction, which 10.x shares (low)
    plain = _scan(
        tmp_path / "plain",
        {
            "eng/gemm.py": helper.replace(
                "prototype to the SM90 architecture validated end to end", "kernel to SM90"
            )
        },
    )
    assert _brief(plain) == [("gate-excludes-arch", "low", "eng/gemm.py", 9)]


def test_a_module_that_never_asks_the_gpu_tests_archs_it_is_given(tmp_path: Path) -> None:
    generator = """
        def kernel_code(spec):
            sm = spec.sm_mma
            if sm == 90:  # Hopper's warp-specialized kernels
                code = emit_warp_specialized(spec)
            else:
                code = emit_plain(spec)
            return code
    """
    found = _scan(tmp_path, {"eng/gen.py": generator})
    assert [f.severity for f in found] == ["low"]
    assert "never asks the GPU it runs on" in found[0].consequence
    # the same decision in a module that reads the device: the device's arch, judged as ever
    asked = "import torch\n\n" + textwrap.dedent(generator).replace(
        "sm = spec.sm_mma", "sm = spec.sm_mma or torch.cuda.get_device_capability()[0] * 10"
    )
    found = _scan(tmp_path / "asked", {"eng/gen.py": asked})
    assert [f.severity for f in found] == ["medium"]


def test_a_predicate_named_for_the_gpu_it_asks_about_is_no_gap(tmp_path: Path) -> None:
    helpers = """
        import torch

        from eng.versions import version_at_least

        def is_sm100a_supported(device):
            major, _ = torch.cuda.get_device_capability(device)
            return major == 10 and version_at_least(torch.version.cuda, "12.8")

        def fast_path_supported(device):
            major, _ = torch.cuda.get_device_capability(device)
            return major == 10 and version_at_least(torch.version.cuda, "12.8")
    """
    found = _scan(tmp_path, {"eng/utils.py": helpers})
    # the name says which GPU it answers for; a name that promises a path does not
    assert [f.symbol for f in found if f.severity != "low"] == ["major"]
    assert [f.line for f in found if f.severity != "low"] == [11]


def test_an_unresolved_platform_property_for_another_vendor_is_false_on_cuda(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/pick.py": """
        import torch

        from eng.platforms import current_platform


        def pick():
            if torch.cuda.get_device_capability()[0] == 10:
                backend = "fast"
            elif current_platform.is_hip:
                backend = "aiter"
            else:
                backend = "triton"
            return backend
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/pick.py", 7)]
    assert found[0].extra["instead"] == "sets backend = 'triton'"


def test_a_conditional_nested_in_a_conditional_is_one_finding(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/pick.py": """
        import torch

        def default_backend(is_diffusion):
            return (
                "triton"
                if is_diffusion
                else ("fast_attn" if torch.cuda.get_device_capability()[0] == 10 else "triton")
            )
    """
        },
    )
    assert len([f for f in found if f.line == 7]) == 1


def test_a_hopper_only_predicate_or_ed_with_one_for_10x_is_a_loss(tmp_path: Path) -> None:
    body = """
        from eng.platforms import current_platform
        from eng.lib import has_lib

        def _varlen_ok():
            return current_platform.is_device_capability_family(100) and has_lib()

        def _flattened_ok():
            return current_platform.is_device_capability_family(90) and has_lib()
    """
    found = _scan(
        tmp_path,
        {
            "eng/alone.py": body,
            "eng/joined.py": body
            + """
        class Backend:
            @classmethod
            def takes_device_lens(cls):
                return _varlen_ok() or (
                    _flattened_ok()
                )
    """,
        },
    )
    hopper = [f for f in found if f.line == 7]
    # alone, every 10.x GPU goes without the Hopper-only yes as 12.0 does (its special case: low);
    # or-ed with the 10.x predicate, both generations get the caller's yes and 12.0 alone does not
    assert [(f.path, f.severity) for f in hopper] == [("eng/alone.py", "low"), ("eng/joined.py", "medium")]
    assert "or-s _flattened_ok() with _varlen_ok()" in hopper[1].consequence


def test_another_platform_s_branch_is_not_what_the_target_gets(tmp_path: Path) -> None:
    """`is_cpu() and has_amx` is False on every NVIDIA GPU whatever `has_amx` is, and an AMD arch's
    own predicate (`is_gfx1250_supported()`) too: neither arm is listed as what 12.0 gets."""
    found = _scan(
        tmp_path,
        {
            "eng/o.py": """
        import torch

        from eng.utils import has_amx, is_cpu, is_gfx1250_supported

        _is_gfx1250 = is_gfx1250_supported()


        def backend():
            if torch.cuda.get_device_capability()[0] == 10:
                return "trtllm_mha"
            elif is_cpu() and has_amx():
                return "intel_amx"
            elif _is_gfx1250:
                return "aiter"
            return "triton"
    """
        },
    )
    assert [f.message for f in found] == [
        "get_device_capability leaves 12.0 out: 10.0, 10.3 returns 'trtllm_mha', "
        "12.0 carries on (returns 'triton')"
    ]


def test_a_guard_run_is_reported_at_the_guard_that_reads_the_arch(tmp_path: Path) -> None:
    """`if module is None: return` turns every arch away alike: the finding names the next guard,
    the one that tells 12.0 from 10.x (issue 14 point 7: the symbol that decides, not its neighbour)."""
    found = _scan(
        tmp_path,
        {
            "eng/warmup.py": """
        import torch

        from eng.kernels import run_warmup


        def warmup(worker):
            module = worker.sparse_module()
            if module is None:
                return
            if torch.cuda.get_device_capability()[0] != 10:
                return
            run_warmup(worker)
    """
        },
    )
    assert [(f.line, f.symbol, f.source) for f in found] == [
        (10, "get_device_capability", "if torch.cuda.get_device_capability()[0] != 10:")
    ]


def test_a_refusal_that_names_nvlink_is_expected(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/sp.py": """
        import torch


        def check(x):
            if torch.cuda.get_device_capability(x.device)[0] != 10:
                raise ValueError("SP collectives require NVLink Blackwell GPUs")
            return x
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/sp.py", 5)]


def test_a_refusal_naming_major_versions_states_what_they_share(tmp_path: Path) -> None:
    """ "supports only compute capability major versions 10 and 11": 10.x and 11.0 share tcgen05,
    which 12.0 lacks: an expected refusal."""
    found = _scan(
        tmp_path,
        {
            "eng/mla.py": """
        import torch


        def plan(x):
            major = torch.cuda.get_device_capability()[0]
            if major not in (10, 11):
                raise RuntimeError("cutlass MLA supports only compute capability major versions 10 and 11")
            return x
    """
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/mla.py", 6)]
    assert "the refusal naming 10.0, 10.3, 11.0 as what it requires" in found[0].consequence


def test_a_refusal_naming_hopper_and_blackwell_states_a_kernel_per_generation(tmp_path: Path) -> None:
    """A refusal "requires Hopper SM90 or Blackwell SM100/SM103" (sglang's skip-softmax): each arch it accepts
    has an MMA generation of its own (wgmma, tcgen05), 12.0 neither: an expected refusal. Not for a
    collective ("allreduce fusion requires SM90 or SM10X": its code runs no MMA), nor where the
    decision says the archs were only validated: those stay medium."""
    found = _scan(
        tmp_path,
        {
            "eng/skip.py": """
        import torch


        def check(params):
            cap = torch.cuda.get_device_capability()
            if cap not in ((9, 0), (10, 0), (10, 3)):
                raise ValueError("skip_softmax requires Hopper SM90 or Blackwell SM100/SM103")
            return params
    """,
            "eng/fusion.py": """
        import torch


        def resolve(backend):
            cap = torch.cuda.get_device_capability()
            if cap not in ((9, 0), (10, 0), (10, 3)):
                raise ValueError("allreduce fusion requires SM90 or SM10X GPUs")
            return backend
    """,
            "eng/indexer.py": """
        import torch


        def indexer(dtype):
            cap = torch.cuda.get_device_capability()
            # fp8 scoring runs on TileLang GEMMs, validated on Hopper and Blackwell.
            if cap not in ((9, 0), (10, 0), (10, 3)):
                raise ValueError("fp8 indexer requires an SM90/SM100 GPU")
            return dtype
    """,
        },
    )
    assert _brief(found) == [
        ("gate-excludes-arch", "medium", "eng/fusion.py", 6),
        ("gate-excludes-arch", "medium", "eng/indexer.py", 7),
        ("gate-excludes-arch", "low", "eng/skip.py", 6),
    ]
    assert "needs tcgen05 or wgmma (read from the refusal naming 9.0, 10.0, 10.3" in found[2].consequence


def test_a_function_there_to_warn_decides_no_path(tmp_path: Path) -> None:
    """vLLM's `warn_if_flashinfer_kernels_missing()`: below Hopper it returns before warning that
    FlashInfer's precompiled kernels are missing; being left out of a warning loses nothing."""
    text = """
    import logging

    import torch

    logger = logging.getLogger(__name__)


    def warn_if_kernels_missing(installed) -> None:
        if torch.cuda.get_device_capability()[0] < 9:
            return
        if not installed:
            logger.warning("precompiled kernels are missing: they are compiled at startup")
    """
    assert _scan(tmp_path, {"eng/kernels.py": text}, arch="8.9") == []


_LIBRARY_ASKED = """
import torch


def grouped_gemm_supported(cuda_device_capability: int) -> bool:
    if cuda_device_capability < 90 or cuda_device_capability >= 110:
        return False
    return {answer}
"""


def test_a_gate_that_keeps_the_target_from_asking_the_compiled_library_is_expected(tmp_path: Path) -> None:
    """vLLM's `cutlass_group_gemm_supported`: 9.0 and 10.x ask the compiled library what it was
    built with; 12.0 is kept from asking (its grouped GEMM kernels are sm90/sm100 only)."""
    answer = "torch.ops._C.cutlass_group_gemm_supported(cuda_device_capability)"
    found = _scan(tmp_path, {"eng/ops.py": _LIBRARY_ASKED.format(answer=answer)})
    assert [(f.severity, "compiled library" in f.extra.get("evidence", "")) for f in found] == [("low", True)]


def test_a_kernel_of_the_compiled_library_is_no_query(tmp_path: Path) -> None:
    answer = "torch.ops._C.grouped_gemm(cuda_device_capability)"
    found = _scan(tmp_path, {"eng/ops.py": _LIBRARY_ASKED.format(answer=answer)})
    assert [f.severity for f in found] == ["medium"]


def _generated_family(tmp_path: Path, tcgen05_at: set[int], count: int = 40) -> list[Finding]:
    """A JIT module keyed by arch flags over `count` generated hash-named kernel programs, those at
    `tcgen05_at` (by sorted name) built on tcgen05, the others plain CUDA."""
    names = [f"gdn/fam_{i:02d}_kernel.cu" for i in range(count)]
    listed = "".join(f'    "{n}",\n' for n in names)
    files = {
        "eng/jit/fam.py": (
            "from .core import build, sm100a_nvcc_flags, sm103a_nvcc_flags\n\n"
            "SOURCES = [\n" + listed + "]\n\n"
            '_ARCH_FLAGS = {\n    "sm_100a": sm100a_nvcc_flags,\n    "sm_103a": sm103a_nvcc_flags,\n}\n\n\n'
            "def gen_fam_module(arch):\n"
            "    return build(SOURCES, flags=_ARCH_FLAGS[arch])\n"
        ),
    }
    for i, name in enumerate(names):
        commit = 'asm volatile("tcgen05.commit.cta_group::1.b64 [%0];" :: "l"(p));'
        body = commit if i in tcgen05_at else "x[0] += 1.f;"
        files[f"eng/csrc/{name}"] = f"__global__ void k{i}(float* x, long p) {{ {body} }}\n"
    return _scan(tmp_path, files)


def test_a_family_of_many_generated_kernels_is_read_past_a_dozen(tmp_path: Path) -> None:
    # 12 of 40 programs are tcgen05 (a backend's prefill stages among its gathers and norms), none of
    # them where an even dozen would be picked (0, 3, 6, 10, ...): all 40 are read, and a quarter
    # of them is what the family needs
    stages = {1, 2, 4, 5, 7, 8, 9, 11, 12, 14, 15, 17}
    found = [f for f in _generated_family(tmp_path, stages) if f.rule == "table-missing-arch"]
    assert [(f.symbol, f.severity) for f in found] == [("_ARCH_FLAGS", "low")]
    assert "tcgen05" in found[0].consequence


def test_a_family_whose_few_tcgen05_kernels_are_under_a_quarter_looks_portable(tmp_path: Path) -> None:
    # 3 of 40: the family's other programs run without them, nothing says the table keys tcgen05 code
    found = [f for f in _generated_family(tmp_path / "few", {1, 2, 4}) if f.rule == "table-missing-arch"]
    assert [f.symbol for f in found] == ["_ARCH_FLAGS"]
    assert found[0].severity != "low" and "tcgen05" not in found[0].consequence


def _unshipped_family(tmp_path: Path, runner_doc: str, build_comment: str) -> list[Finding]:
    """A kernel family's small package whose generated sources the wheel leaves out: an import-light
    support check that refuses all but 10.x, the runner whose docstring is `runner_doc`, and the
    build naming the programs it would compile, under `build_comment`."""
    files = {
        "eng/fam/__init__.py": "",
        "eng/fam/support.py": """
        import torch

        def fam_requirement(x):
            if torch.cuda.get_device_capability()[0] != 10:
                raise RuntimeError("unsupported compute capability")
            return True
    """,
        "eng/fam/fam_backend.py": f'''
        """{runner_doc}"""

        from .fam_jit import gen_fam_module

        def run(x):
            return gen_fam_module().run(x)
    ''',
        "eng/fam/fam_jit.py": f"""
        # {build_comment}
        def gen_fam_module():
            return build("fam", sources=["fam_generated_kernel.cu"])
    """,
    }
    return [f for f in _scan(tmp_path, files) if f.path == "eng/fam/support.py"]


def test_a_gate_beside_a_family_that_states_tcgen05_is_expected(tmp_path: Path) -> None:
    # the support module imports nothing of its family; what the family runs is what its runner says
    found = _unshipped_family(
        tmp_path,
        "Persistent block-scaled tcgen05 GEMM with a per-token epilogue.",
        "The generated 2-CTA tcgen05 programs, one library per arch.",
    )
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    assert "tcgen05" in found[0].consequence and "fam_backend.py" in found[0].consequence


def test_a_gate_beside_a_family_that_states_nothing_is_a_gap(tmp_path: Path) -> None:
    found = _unshipped_family(tmp_path, "Runner of the per-token GEMM.", "One library per arch.")
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "medium")]


def test_one_docstring_in_a_package_of_alternatives_says_nothing_of_the_gate(tmp_path: Path) -> None:
    # one module of the package says tcgen05, the other says nothing: a package of several kernels'
    # wrappers (sglang's `linear/kernels/`), not one family's modules saying it together
    found = _unshipped_family(tmp_path, "The tcgen05 KDA kernel's wrapper.", "The portable GDN kernel.")
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "medium")]


def _behind_an_api(tmp_path: Path, refusal: str, impl: str = "_impl") -> list[Finding]:
    """A kernel family's API that raises `refusal` for any major but 10 before it launches, and the
    module `impl` it imports, whose launcher splits the KV on 10.x only."""
    files = {
        "eng/attn/__init__.py": "",
        "eng/attn/api.py": f"""
        import torch
        from . import {impl}

        def run(q):
            major, minor = torch.cuda.get_device_capability(q.device)
            if major != 10:
                raise RuntimeError("{refusal}")
            return {impl}.launch(q)
    """,
        f"eng/attn/{impl}.py": """
        import torch

        def _use_split_kv():
            cap = torch.cuda.get_device_capability()
            if cap in ((10, 0), (10, 3)):
                return True
            return False

        def launch(q):
            return run_kernel(q, split_kv=_use_split_kv())
    """,
    }
    return [f for f in _scan(tmp_path, files) if f.path == f"eng/attn/{impl}.py"]


def test_a_private_module_behind_an_api_that_refuses_the_target_is_never_reached(tmp_path: Path) -> None:
    found = _behind_an_api(tmp_path, "attention requires an SM100 GPU (tcgen05)")
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    said = "never reached on 12.0: every module that imports it (api.py) refuses 12.0 first"
    assert said in found[0].consequence


def test_a_bare_refusal_or_a_public_module_leaves_the_gate_as_it_is(tmp_path: Path) -> None:
    # "unsupported" says nothing of what the path needs: the refusal may be the gap itself
    bare = _behind_an_api(tmp_path / "bare", "unsupported compute capability")
    # a public module may be imported past the refusal, or from outside the scan
    public = _behind_an_api(tmp_path / "public", "attention requires an SM100 GPU (tcgen05)", impl="impl")
    assert [f.severity for f in bare] == ["medium"]
    assert [f.severity for f in public] == ["medium"]
