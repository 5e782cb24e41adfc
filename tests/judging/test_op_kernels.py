"""A path that calls a torch op of the tree's library needs what the images holding the op's kernels
were built for (vLLM's `ops.kimi_k3_attn_res` after a family-100 gate, whose kernel sits only in the
`sm_100f` images of `_C_stable_libtorch.abi3.so`, most of whose other kernels are portable).

The library is the committed nvcc-built `torch_ops.so`: the `fused_widget_mix` op's kernel is only
in an sm_100f image, `plain_widget_scale`'s in sm_80 and sm_100f images."""

from __future__ import annotations

import shutil
from pathlib import Path

from capgap.binaries.kernels import KernelIndex
from capgap.judging.opkernels import OpKernels, op_names
from tests.binaries.conftest import DATA

from .test_decisions import _scan

_WRAPPERS = """
import torch


def fused_widget_mix(out, x):
    torch.ops._C.fused_widget_mix(out, x)


def plain_widget_scale(x, a):
    return torch.ops._C.plain_widget_scale(x, a)
"""

_LAYER = """
import torch

from eng import _custom_ops as ops


def mix(out, x):
    if torch.cuda.get_device_capability()[0] == 10:
        return ops.fused_widget_mix(out, x)
    return torch.mul(x, x, out=out)


def scale(x):
    if torch.cuda.get_device_capability()[0] == 10:
        return ops.plain_widget_scale(x, 2.0)
    return x * 2


def fused_mix_available() -> bool:
    return torch.cuda.get_device_capability()[0] == 10 and hasattr(torch.ops._C, "fused_widget_mix")
"""


def _gates(tmp_path: Path, library: bool) -> dict[str, tuple[str, str]]:
    if library:
        (tmp_path / "eng").mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "torch_ops.so", tmp_path / "eng" / "_C.abi3.so")
    found = _scan(tmp_path, {"eng/_custom_ops.py": _WRAPPERS, "eng/layer.py": _LAYER})
    lines = _LAYER.lstrip("\n").splitlines()
    named = {i + 1: text.split("def ")[1].split("(")[0] for i, text in enumerate(lines) if "def " in text}
    out = {}
    for f in found:
        if f.rule == "gate-excludes-arch":
            owner = named[max(line for line in named if line <= f.line)]
            out[owner] = (f.severity, f.consequence)
    return out


def test_a_path_running_an_op_whose_kernel_is_built_only_for_sm100_is_expected(tmp_path: Path) -> None:
    gates = _gates(tmp_path, library=True)
    severity, consequence = gates["mix"]
    assert severity == "low"
    assert (
        "needs tcgen05 (read from the kernels of torch op fused_widget_mix in eng/_C.abi3.so "
        "(fused_widget_mix_kernel), built only for sm_100f)" in consequence
    )
    # the test that asks whether the op exists names it too
    assert gates["fused_mix_available"][0] == "low"
    assert "fused_widget_mix_kernel" in gates["fused_mix_available"][1]
    # an op whose kernel has an sm_80 image runs anywhere from 8.0 on: the gate loses 12.0 a path
    assert gates["scale"][0] == "medium"


def test_without_the_library_an_op_says_nothing(tmp_path: Path) -> None:
    gates = _gates(tmp_path, library=False)
    assert {name: severity for name, (severity, _) in gates.items()} == {
        "mix": "medium",
        "scale": "medium",
        "fused_mix_available": "medium",
    }


def test_the_op_names_code_hands_torch() -> None:
    code = """
    if hasattr(torch.ops._C, "qwen4_exp_hc_up_gate_mix"):
        torch.ops._moe_C.topk_softmax(a, b)
        ops.kimi_k3_attn_res(x)
        helper.not_an_import(y)
        ops.run(z)
    """
    assert op_names(code, {"ops", "torch"}) == (
        "qwen4_exp_hc_up_gate_mix",
        "topk_softmax",
        "kimi_k3_attn_res",
    )


def _judged(kernels: dict[str, tuple[str, ...]], op: str, complete: bool = True) -> tuple[str, ...] | None:
    index = KernelIndex(kernels, complete)
    found = OpKernels([("lib/_C.so", "/x/_C.so")], lambda path: frozenset({op}), lambda path: index).needs(
        [op]
    )
    return found[0] if found else None


def test_an_op_is_bound_only_when_every_kernel_named_like_it_is() -> None:
    # the op's words run through the kernel's own name: `fused_mqa_topk` of `fused_mqa_topk_prefill`
    assert _judged({"fused_mqa_topk_fp8_prefill_kernel": ("sm_100f",)}, "fused_mqa_topk_prefill") == (
        "tcgen05",
    )
    assert _judged({"grouped_gemm_kernel": ("sm_90a",)}, "moe_grouped_gemm") == ("wgmma",)
    # a kernel of a like name with a portable image: the op may run there
    alike = {"fused_mqa_topk_fp8_prefill_kernel": ("sm_100f",), "mqa_topk_fallback_kernel": ("sm_80",)}
    assert _judged(alike, "fused_mqa_topk_prefill") is None
    # no kernel named for it (one shared word is no name): nothing known of what it runs
    assert _judged({"topk_kernel": ("sm_100f",)}, "fused_mqa_topk_prefill") is None
    assert _judged({"device_kernel": ("sm_100f",)}, "cutlass_scaled_mm") is None
    # an image left unread: nothing can be proved absent
    assert (
        _judged({"fused_mqa_topk_fp8_prefill_kernel": ("sm_100f",)}, "fused_mqa_topk_prefill", False) is None
    )
    # an op no library registers
    none = OpKernels([("lib/_C.so", "/x/_C.so")], lambda path: frozenset(), lambda path: None)
    assert none.needs(["fused_mqa_topk_prefill"]) is None
