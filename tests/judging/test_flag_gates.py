"""A gate on a flag whose name holds no hint word (`if can_use_custom_nvls_collectives:`, built from
`is_hopper_or_newer`) guards what it guards whole: the statement cut, which keeps a gate whole only
when its own test names a capability, is redone with that test kept, so the nested multimem calls
the arm makes are read (megatron-core 0.16.1 `inference_layers.py:233`)."""

from __future__ import annotations

from pathlib import Path

from capgap.reading import chunks
from capgap.reading.fileparse import facts_for_bytes
from tests.judging.test_decisions import _brief, _scan

_FLAG_GATE = """
import torch


def matmul_reduce_scatter(self, x):
    # Multiplies x by the weight and reduce-scatters the product.
    #
    # It first tries to write the product to symmetric memory and reduce-scatter it
    # with multimem instructions. If that is not possible, it falls back to the
    # process group's reduce-scatter.
    #
    # A long enough function that the statement cut shortens it.
    #
    is_bf16 = x.dtype == torch.bfloat16
    is_hopper_or_newer = torch.cuda.get_device_properties(x.device).major >= 9
    buffer = get_buffer(x)
    has_room = buffer["handle"] is not None
    can_use_custom_collectives = (
        is_bf16 and is_hopper_or_newer and has_room
    )
    if can_use_custom_collectives:
        torch.matmul(x, self.weight.t(), out=buffer["tensor"])
        x = buffer["tensor"]
        if self.next_weights is None:
            output = torch.empty(x.size(), dtype=x.dtype, device=x.device)
            multimem_reduce_scatter(output, x, buffer["handle"])
            return output
        else:
            residual = self.residual
            fused_multimem_rs_add_norm_ag(residual, buffer["tensor"], buffer["handle"])
            return residual
    else:
        x = torch.matmul(x, self.weight.t())
        x = reduce_scatter_along_first_dim(x)
    return x
""".lstrip("\n")


def _gate_offset(text: bytes) -> int:
    return text.index(b"if can_use_custom_collectives:")


_GATE_LINE = _FLAG_GATE[: _FLAG_GATE.index("if can_use_custom_collectives:")].count("\n") + 1


def test_the_cut_keeps_a_gate_whole_at_an_offset_it_is_given() -> None:
    data = _FLAG_GATE.encode()
    assert b"multimem_reduce_scatter(" not in chunks.select(data).text  # no hint word in the gate's test
    kept = chunks.select(data, gates=(_gate_offset(data),)).text
    assert b"multimem_reduce_scatter(output" in kept and b"fused_multimem_rs_add_norm_ag(" in kept
    assert kept.count(b"\n") == data.count(b"\n")  # line numbers stay


def test_the_arm_of_a_flag_gate_calls_what_its_nested_blocks_call() -> None:
    facts = facts_for_bytes("eng/layers.py", _FLAG_GATE.encode(), True)
    assert facts is not None
    gate = next(d for d in facts.decisions if d.line == _GATE_LINE)
    assert ("nvls_multicast",) in gate.arms[0].needs


def test_a_flag_gate_into_multimem_admits_the_target_into_what_it_lacks(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/layers.py": _FLAG_GATE})
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/layers.py", _GATE_LINE)]
    assert "needs NVLS multicast" in found[0].message


def test_a_gate_whose_test_names_the_capability_needs_no_second_cut() -> None:
    data = _FLAG_GATE.replace("if can_use_custom_collectives:", "if is_hopper_or_newer:").encode()
    assert b"multimem_reduce_scatter(output" in chunks.select(data).text
