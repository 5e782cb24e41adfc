"""A flag built by a long `and` of conditions, one of them the capability, is a capability test
where the flag is tested (vLLM's fused MoE: `use_tma_b = (bool(config.pop("USE_TMA", True)) and
... and (family(90) or family(100)) and ...)`, sixteen lines, then `if use_tma_b:`)."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_MOE = """
from vllm.platforms import current_platform


def invoke_kernel(config, A, B, use_fp8_w8a8, block_shape, block_k):
    use_tma_b = (
        bool(config.pop("USE_TMA", True))
        and use_fp8_w8a8
        and block_shape is not None
        and all(block_shape)
        and current_platform.is_cuda()
        and (
            current_platform.is_device_capability_family(90)
            or current_platform.is_device_capability_family(100)
        )
        and B.device.type == "cuda"
        and B.is_contiguous()
        and B.size(1) % config["BLOCK_SIZE_N"] == 0
        and B.size(2) % block_k == 0{more}
    )
    if use_tma_b:
        set_triton_allocator(A.device)
        b_desc = TensorDescriptor.from_tensor(B, [1, config["BLOCK_SIZE_N"], block_k])
    return launch(A, B, use_tma_b)
"""


def test_a_long_flag_tested_later_is_judged_where_it_is_tested(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fused_moe.py": _MOE.format(more="")}, arch="12.0")
    (gate,) = [f for f in found if f.rule == "gate-excludes-arch"]
    assert gate.symbol == "use_tma_b" and gate.severity == "medium"
    assert gate.message.startswith("use_tma_b leaves 12.0 out: 9.0, 10.0, 10.3")


def test_an_expression_longer_than_a_flag_is_not_read_as_one(tmp_path: Path) -> None:
    more = "".join(f"\n        and B.size({i}) > 0" for i in range(8))
    found = _scan(tmp_path, {"eng/fused_moe.py": _MOE.format(more=more)}, arch="12.0")
    assert [f for f in found if f.rule == "gate-excludes-arch"] == []
