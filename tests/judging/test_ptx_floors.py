"""PTX whose target decides where it builds (arch.facts DERIVED, each checked with nvcc 13.0):
sm_90's griddepcontrol / elect.sync / setmaxnreg, sm_100's packed FP32, the SM100 family's
redux.sync on f32. Read as needs, in Python and in native code."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import facts_for
from capgap.judging import evidence
from capgap.native import bodies

from .test_decisions import _brief, _scan


def test_each_floor_admits_the_gpus_nvcc_builds_it_for() -> None:
    ccs = ("8.0", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1")

    def who(feature: str) -> list[str]:
        return [cc for cc in ccs if facts_for(cc).has(feature)]

    assert who("ptx_sm90") == ["9.0", "10.0", "10.3", "11.0", "12.0", "12.1"]
    assert who("ptx_sm100") == ["10.0", "10.3", "11.0", "12.0", "12.1"]
    assert who("redux_f32") == ["10.0", "10.3"]
    assert who("cvt_rs") == ["10.0", "10.3"]  # cvt.rs.satfinite.bf16x2.f32: sm_100a, sm_103a only


def test_the_floors_are_spelled_in_python_and_native_code() -> None:
    assert evidence.needs_in("self.use_pdl = true") == [("ptx_sm90",)]
    assert evidence.needs_in("if cute.arch.elect_one():") == [("ptx_sm90",)]
    assert evidence.needs_in("if ENABLE_PDL: pdl_sync()".lower()) == [("ptx_sm90",)]
    assert evidence.needs_in("updl = 1; pdls = 0") == []  # not the word
    assert evidence.needs_in('asm("redux.sync.max.abs.f32 %0, %1, 0xffffffff;")') == [("redux_f32",)]
    assert evidence.needs_in('asm("redux.sync.max.u32 %0, %1, 0xffffffff;")') == []  # any sm_80+
    assert bodies.needs(b"d = __ffma2_rn(a, b, c);", 7, "")[0] == (("ptx_sm100",),)
    assert evidence.describe(("ptx_sm90",)) == "sm_90 PTX (griddepcontrol, elect.sync, setmaxnreg)"


_PDL = """
import torch


def launch_options():
    opts = {}
    if torch.cuda.get_device_capability()[0] >= 9:
        opts["launch_pdl"] = True
    return opts
"""


def test_a_floor_at_hopper_for_pdl_is_expected_on_ada(tmp_path: Path) -> None:
    found = _scan(tmp_path / "ada", {"eng/launch.py": _PDL}, arch="8.9")
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/launch.py", 6)]
    assert "needs sm_90 PTX (griddepcontrol, elect.sync, setmaxnreg)" in found[0].consequence
    assert _scan(tmp_path / "rtx", {"eng/launch.py": _PDL}, arch="12.0") == []


def test_collectives_between_gpus_are_expected_where_every_product_has_one_gpu(tmp_path: Path) -> None:
    one_gpu = [cc for cc in ("8.7", "8.9", "11.0", "12.0", "12.1") if not facts_for(cc).has("multi_gpu")]
    assert one_gpu == ["8.7", "11.0", "12.1"]  # Jetson Orin and Thor, DGX Spark
    fusion = """
    import torch


    def enable_fusion(cfg):
        if torch.cuda.get_device_capability() in ((9, 0), (10, 0)):
            cfg.fuse_allreduce_rms = True
        return cfg
    """
    on_spark = _scan(tmp_path / "spark", {"eng/cfg.py": fusion}, arch="12.1")
    assert [f.severity for f in on_spark] == ["low"]
    assert "needs more than one GPU in a system" in on_spark[0].consequence
    assert [f.severity for f in _scan(tmp_path / "rtx", {"eng/cfg.py": fusion}, arch="12.0")] == ["medium"]


def test_a_path_of_sm100_family_cubins_is_expected_on_thor_but_not_a_jit_tcgen05_kernel(
    tmp_path: Path,
) -> None:
    # 11.0 has tcgen05, but runs no cubin built for sm_100a/100f (TRT-LLM-gen): it needs its own build
    cubins = """
    import torch


    def moe_backend():
        if torch.cuda.get_device_capability()[0] == 10:
            return "flashinfer_trtllm"
        return "triton"
    """
    on_thor = _scan(tmp_path / "thor", {"eng/moe.py": cubins}, arch="11.0")
    assert [f.severity for f in on_thor] == ["low"]
    assert "code built for the SM100 family (sm_100a/sm_100f/sm_103a)" in on_thor[0].consequence
    jit = cubins.replace('"flashinfer_trtllm"', "run_tcgen05_kernel()").replace(
        '"triton"', "run_simt_kernel()"
    )
    assert [f.severity for f in _scan(tmp_path / "jit", {"eng/moe.py": jit}, arch="11.0")] == ["medium"]


def test_cubins_built_per_generation_are_expected_on_thor_too(tmp_path: Path) -> None:
    """Hopper, the SM100 family and 12.x each run cubins of their own (TRT-LLM's XQA, TRT-LLM-gen):
    a path every generation but 11.0's gets needs a build 11.0 has none of."""
    per_generation = """
    import torch


    def check_backend(backend):
        major = torch.cuda.get_device_capability()[0]
        if backend and major not in (9, 10, 12):
            raise ValueError("TRTLLM MHA backend requires Hopper (SM90), Blackwell (SM100), or SM120")
        return backend
    """
    on_thor = _scan(tmp_path / "thor", {"eng/attn.py": per_generation}, arch="11.0")
    assert [f.severity for f in on_thor] == ["low"]
    assert "code built for the SM100 family" in on_thor[0].consequence


_CVT_RS = """
import torch


def is_stochastic_rounding_supported() -> bool:
    # Match the CUDA guard exactly: only the arches where cvt.rs actually assembles
    return torch.cuda.get_device_capability() in ((10, 0), (10, 3))
"""


def test_an_arch_list_a_comment_ties_to_cvt_rs_is_expected(tmp_path: Path) -> None:
    """FlashInfer's `is_cvt_rs_supported()`: stochastic rounding assembles for sm_100a/sm_103a
    only (nvcc 13.0 refuses sm_120a, sm_121a, sm_110a, sm_100f), so 12.0 is rightly left out."""
    found = _scan(tmp_path, {"eng/sr.py": _CVT_RS})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/sr.py", 4)]
    assert "cvt.rs" in found[0].extra["evidence"]


def test_a_table_named_for_cvt_rs_is_expected(tmp_path: Path) -> None:
    """FlashInfer's `CVT_RS_SUPPORTED_ARCHES` (the name: `cvt_rs` followed by more of it)."""
    table = """
    CVT_RS_SUPPORTED_ARCHES = {
        (10, 0): "sm_100a",
        (10, 3): "sm_103a",
    }
    """
    found = _scan(tmp_path, {"eng/utils.py": table})
    assert _brief(found) == [("table-missing-arch", "low", "eng/utils.py", 1)]
    assert "cvt_rs" in found[0].extra["evidence"]


def test_what_the_owners_get_names_the_cubins_on_thor(tmp_path: Path) -> None:
    """sglang's CuteDSL MLA override: past `if not is_sm100: raise`, the SM100 family is given
    `trtllm_mla` prefill, TRT-LLM-gen cubins with no sm_110 build; what the owners' arm gives is
    the evidence (the refusal's own words name no kernel family)."""
    override = """
    import torch


    def cutedsl_mla_overrides(backend):
        if backend != "cutedsl_mla":
            return {}
        if torch.cuda.get_device_capability()[0] != 10:
            raise ValueError("CuteDSL MLA backend is only supported on Blackwell GPUs (SM100).")
        return {"prefill_attention_backend": "trtllm_mla"}
    """
    on_thor = _scan(tmp_path / "thor", {"eng/overrides.py": override}, arch="11.0")
    assert [f.severity for f in on_thor] == ["low"]
    assert "trtllm_mla" in on_thor[0].extra["evidence"]


def test_mx_formats_need_the_block_scaled_mma_blackwell_brought() -> None:
    """MXFP8 (e8m0 scales per 32 values) runs on block-scaled MMA: tcgen05's kind::mxf8f6f4 on
    10.x/11.0, mma.sync ... block_scale on 12.x; nvcc refuses it for sm_90a and sm_89."""
    ccs = ("8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1")
    having = [cc for cc in ccs if facts_for(cc).has("block_scaled_mma")]
    assert having == ["10.0", "10.3", "11.0", "12.0", "12.1"]
    assert evidence.needs_in("class mxfp8onlinelinearmethod:") == [("block_scaled_mma",)]
    assert evidence.needs_in("quant = 'fp8_e4m3'") == [("fp8_tensor_cores",)]  # plain FP8 stays FP8


_MXFP8 = """
import torch


def process_weights(layer):
    if torch.cuda.get_device_capability()[0] >= 10:
        layer.mxfp8 = True
        layer.weight = quantize_mxfp8(layer.weight)
"""


def test_an_mxfp8_path_is_expected_on_hopper_and_no_finding_on_blackwell(tmp_path: Path) -> None:
    found = _scan(tmp_path / "h100", {"eng/mx.py": _MXFP8}, arch="9.0")
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/mx.py", 5)]
    assert "needs block-scaled (MX format) tensor-core MMA" in found[0].consequence
    assert _scan(tmp_path / "rtx", {"eng/mx.py": _MXFP8}, arch="12.0") == []
