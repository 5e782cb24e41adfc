"""Attention implementations torch registers by name and a model activates with
`torch.nn.attention.activate_flash_attention_impl("FA4")`.

Each accepts only some majors. torch 2.13's `torch/nn/attention/_fa4.py` (`_fa4_common_support_error`)
returns "FA4 requires compute capability 9.0 or 10.0" for any other, and `_fa3.py` "FA3 requires
compute capability 9.0" (read here as the `fa3` need, evidence.NEEDS). A module that speaks of that
registry (`activate_flash_attention_impl`, `get_cuda_flash_attention_impl`) and gives the string
"FA4" names torch's implementation, not flash-attn's own package, whose CuTe interface has an
SM120 path of its own.
"""

from __future__ import annotations

import re

NEED = ("torch_fa4",)  # (arch.facts DERIVED)
_REGISTRY = "flash_attention_impl"  # in the names of torch's activate/current/register functions
_FA4 = re.compile(r"""(?<![\w.])["']FA4["']""")


def speaks_of_registry(lines: list[str]) -> bool:
    """Does the module name torch's flash-attention implementation registry?"""
    return any(_REGISTRY in line for line in lines)


def needs(code: str, first_line: int) -> list[tuple[tuple[str, ...], str]]:
    """The need of torch's FA4 where `code` (an arm's, in such a module) gives the name "FA4"."""
    hit = _FA4.search(code)
    if hit is None:
        return []
    line = first_line + code.count("\n", 0, hit.start())
    return [(NEED, f"'FA4' (line {line}), a name torch's activate_flash_attention_impl takes")]
