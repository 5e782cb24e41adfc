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
