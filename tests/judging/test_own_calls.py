"""A choice between implementations handed over by functions named alike: the siblings get
`get_cake_router_gemm_module()`, the target `get_dsv3_router_gemm_module()` of its own. Low, worth
measuring; not when the target's is a portable fallback (`get_triton_...`) or the names differ in
more than one word."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_ROUTER = """
import torch


def get_router_gemm_module(*, backend: str):
    if backend != "cake":
        raise ValueError(f"unsupported Router GEMM backend: {{backend!r}}")
    major, minor = torch.cuda.get_device_capability()
    if major == 10 and minor in (0, 3):
        return get_cake_router_gemm_module()
    return {mine}()
"""


def test_the_target_s_own_module_named_alike_is_a_choice(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _ROUTER.format(mine="get_dsv3_router_gemm_module")})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/router.py", 8)]
    assert "a choice between implementations" in found[0].consequence
    assert "12.0 gets 'dsv3' of its own" in found[0].consequence


def test_a_portable_fallback_named_alike_is_no_choice(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _ROUTER.format(mine="get_triton_router_gemm_module")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 8)]


def test_functions_named_apart_are_no_choice(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _ROUTER.format(mine="build_dense_gemm")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 8)]


_PACK = """
import torch


def pack(kv, pe, v):
    if kv.dtype == torch.bfloat16 and torch.cuda.get_device_capability()[0] == 10:
        return {theirs}(kv, pe.reshape(pe.shape[0], pe.shape[-1]), nope_dim=128, scale=1.0, out=None)
    k, v = kv.split((128, 64), dim=-1)
    return {mine}(k, pe, v)
"""


def test_the_same_operation_by_a_function_of_the_target_s_own_is_a_choice(tmp_path: Path) -> None:
    """vLLM 0.34's Kimi-K3 KV pack: FlashInfer's `concat_mla_kv_quant_fp8` on 10.x, its own
    `fused_mla_kv_concat_quant_fp8` elsewhere (every word of the sibling's name, in another order,
    and one of its own), after a split that only prepares the arguments."""
    same = _PACK.format(theirs="concat_mla_kv_quant_fp8", mine="fused_mla_kv_concat_quant_fp8")
    found = _scan(tmp_path / "same", {"eng/pack.py": same})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/pack.py", 5)]
    assert "12.0 gets 'fused_mla_kv_concat_quant_fp8' of its own" in found[0].consequence
    # the sibling's name holds a word the target's lacks: it gets more (a fused variant)
    more = _PACK.format(theirs="fused_mla_kv_concat_quant_fp8", mine="mla_kv_concat_quant_fp8")
    assert [f.severity for f in _scan(tmp_path / "more", {"eng/pack.py": more})] == ["medium"]
    # or the target's own word is a portable fallback's
    ref = _PACK.format(theirs="concat_mla_kv_quant_fp8", mine="reference_concat_mla_kv_quant_fp8")
    assert [f.severity for f in _scan(tmp_path / "ref", {"eng/pack.py": ref})] == ["medium"]
