"""A test that asks the arch and, beside it, the engine's own support query with constant arguments
(`family(100) and supports_trtllm_attention(is_prefill=True)`): where the query answers no for the
target by itself, the arch test shuts out nothing the engine would give it (issue 14, point 1:
judge the decision whole). The query's own decision is judged where it is written."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_QUERY = """
from eng import envs
from eng.platforms import current_platform


def supports_trtllm_attention(is_prefill: bool = False) -> bool:
    \"\"\"SM90 and SM12x run the XQA decode kernel, not TRTLLM prefill.\"\"\"
    if envs.BATCH_INVARIANT:
        return False
    if current_platform.is_device_capability(90) or current_platform.is_device_capability_family(120):
        return not is_prefill
    return current_platform.is_device_capability_family(100)
"""

_BACKEND = """
from eng.platforms import current_platform
from eng.utils.trtllm import supports_trtllm_attention


class Backend:
    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype):
        if kv_cache_dtype.startswith("nvfp4"):
            return (
                current_platform.is_device_capability_family(100)
                and supports_trtllm_attention({args})
            )
        return True
"""


def _found(tmp_path: Path, args: str) -> list:
    files = {"eng/utils/trtllm.py": _QUERY, "eng/attn/backend.py": _BACKEND.format(args=args)}
    return [f for f in _scan(tmp_path, files) if f.path == "eng/attn/backend.py"]


def test_a_query_that_refuses_the_target_beside_the_arch_test_leaves_it_expected(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "is_prefill=True")
    assert found.severity == "low"
    assert "'supports_trtllm_attention(is_prefill=True)' (line 11), which answers False on 12.0" in (
        found.consequence
    )


def test_a_query_that_lets_the_target_in_keeps_the_arch_test_a_gap(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "is_prefill=False")
    assert found.severity == "medium"
    assert found.message == (
        "is_device_capability_family(100) leaves 12.0 out: 10.0, 10.3 returns True, 12.0 returns False"
    )
