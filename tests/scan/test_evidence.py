"""Evidence of what guarded code needs: the literal-led spellings mean what the plain patterns say."""

from __future__ import annotations

import random
import re

from capgap.judging import evidence

# The needs as first written, one alternation each: the reference the spellings must match.
REFERENCE = (
    (
        ("wgmma",),
        r"wgmma|warpgroup(?!\.(?:make_smem_layout_atom|smemlayoutatomkind))|sm_?90a|flash_?attn_?3"
        r"|\bfa3(?:\b|_)|_fa3\b|_fa3_|_sm90\b|_sm90_",
    ),
    (
        ("tcgen05",),
        r"tcgen05|\btmem\b|\btmem_|_tmem|\bumma\b|sm_?100a|_sm100\b|_sm100_|sm10x|trtllm[-_]?gen|flashinfer_trtllm|cutlass_mla",
    ),
    (("wgmma", "tcgen05"), r"deep_?gemm|flash_?mla"),
    (("tma",), r"\btma\b|_tma\b|\btma_|_tma_"),
    (("fp4_tensor_cores",), r"nvfp4|mxfp4|\bfp4\b|_fp4|fp4_|e2m1"),
    (("block_scaled_mma",), r"mxfp8|mx_fp8|mxfp6"),
    (("fp8_tensor_cores",), r"\bfp8\b|_fp8|fp8_|e4m3|e5m2"),
    (("nvls_multicast",), r"multicast|multimem|\bnvls\b|_nvls|nvls_"),
    (("nvswitch",), r"mnnvl|nvswitch"),
)
PIECES = (  # noqa: SIM905 - one string reads better than 55 quoted words
    "wgmma warpgroup sm90a sm_90a flashattn3 flash_attn_3 fa3 _fa3_ _fa3 _sm90 tcgen05 tmem tmem_ _tmem umma "
    "sm100a sm_100a _sm100 sm10x trtllmgen trtllm_gen trtllm-gen cutlass_mla deepgemm deep_gemm flashmla "
    "flash_mla tma _tma fp4 nvfp4 mxfp4 _fp4 e2m1 fp8 _fp8 e4m3 e5m2 multicast multimem nvls _nvls mnnvl "
    "nvswitch mxfp8 mx_fp8 mxfp6 "
    "format stma tmax fp41 afp8 nvlsx é ü 9 _ . ( ) \n"
).split(" ")


def _reference(text: str) -> list[tuple[str, ...]]:
    text = text[: evidence._MAX_CHARS]
    return [feats for feats, pattern in REFERENCE if re.search(pattern, text)]


def test_the_spellings_find_exactly_what_the_reference_patterns_find() -> None:
    rng = random.Random(3)
    found = set()
    for _ in range(20000):
        text = "".join(
            rng.choice(PIECES) if rng.random() < 0.3 else rng.choice("abmstx_ 019()\n") for _ in range(12)
        )
        expected = _reference(text)
        assert evidence.needs_in(text) == expected, text
        found.update(expected)
    assert found == {feats for feats, _ in REFERENCE}  # every need was seen, not just absences
    long = "format(x) " * 900 + "use_tma_store"  # past the first 8000 characters: not read
    assert evidence.needs_in(long) == _reference(long) == []


def test_an_fa3_name_after_an_underscore_is_flashattention_3() -> None:
    # torchao's `return AttentionBackend.FP8_FA3`: FlashAttention-3 is Hopper's wgmma kernel
    assert evidence.needs_in("attentionbackend.fp8_fa3") == [("wgmma",), ("fp8_tensor_cores",)]
    assert evidence.needs_in("use_fa30") == []


def test_trtllm_gen_spelled_with_a_hyphen_is_the_sm100_cubins() -> None:
    # FlashInfer's `"trtllm-gen" if get_compute_capability(dev)[0] == 10 else "xqa"`
    assert evidence.needs_in('backend = "trtllm-gen"') == [("tcgen05",)]


def test_cute_s_warpgroup_smem_layout_atom_is_no_mma() -> None:
    # quack's `warpgroup.make_smem_layout_atom(...)`: a swizzled layout its SM120 GEMM builds too
    assert evidence.needs_in("warpgroup.make_smem_layout_atom(atom, dtype)") == []
    assert evidence.needs_in("warpgroup.smemlayoutatomkind.k_sw128") == []
    assert evidence.needs_in("warpgroup.mmaf16bf16op(a, b)") == [("wgmma",)]
