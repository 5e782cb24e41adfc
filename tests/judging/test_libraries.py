"""Kernel libraries a path reaches through the engine's own wrappers (judging.libraries), what a
predicate's name says it asks about, and the flags an arm turns on (judging.callees)."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.callees import subject_words
from capgap.judging.libraries import entries
from tests.judging.test_decisions import _brief, _scan

_WRAPPER = """
import torch


def fused_gate(x, w):
    import deep_gemm

    out = torch.empty_like(x)
    deep_gemm.fused_gate(x, w, out)
    return out
"""

_PORTABLE_WRAPPER = """
import torch


def fused_gate(x, w):
    return torch.softmax(x @ w, -1)
"""

_PREDICATE = """
import torch

from eng.kernels.fused_gate import fused_gate


def fused_gate_supported(x):
    if torch.cuda.get_device_capability()[0] != 10:
        return False
    return x.shape[-1] % 256 == 0
"""


def test_a_predicate_named_for_an_import_reads_what_its_function_calls(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/gate.py": _PREDICATE, "eng/kernels/fused_gate.py": _WRAPPER})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/gate.py", 7)]
    assert found[0].extra["evidence"] == (
        "'deep_gemm.fused_gate' (line 8) in eng.kernels.fused_gate.fused_gate, which it calls"
    )


def test_a_predicate_named_for_a_portable_wrapper_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/gate.py": _PREDICATE, "eng/kernels/fused_gate.py": _PORTABLE_WRAPPER})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/gate.py", 7)]


def test_subject_words_need_a_predicate_and_two_words() -> None:
    assert subject_words("_can_use_mega_mhc") == {"mega", "mhc"}
    assert subject_words("mega_gate_supported") == {"mega", "gate"}
    assert subject_words("_device_supported") == frozenset()  # one word names no kernel
    assert subject_words("forward_mega_gate") == frozenset()  # no predicate
    assert subject_words("_tinygemm2_sm100_enabled") == frozenset()  # an arch number names no kernel


def test_entries_name_the_library_call_of_each_top_level_function() -> None:
    text = "import hpc\nimport torch\n\n\ndef norm(x):\n    y = torch.empty_like(x)\n"
    text += "    return hpc.fused_norm(x, y)\n"
    assert entries(text, text.lower(), None, "eng.ops.norm", False) == {"norm": "'hpc.fused_norm' (line 7)"}
    plain = "import torch\n\n\ndef norm(x):\n    return torch.nn.functional.rms_norm(x, x.shape[-1:])\n"
    assert entries(plain, plain.lower(), None, "eng.ops.norm", False) == {}


_FLAG_SETTER = """
import torch


class SharedExperts(torch.nn.Module):
    def forward(self, x):
        if getattr(self, "_enable_fused_swiglu", False):
            from eng.kernels.swiglu_gemm import swiglu_gemm

            return swiglu_gemm(x)
        return self.down(self.up(x))


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = SharedExperts()
        if torch.cuda.get_device_capability()[0] == 10:
            self.shared._enable_fused_swiglu = True
"""

_TCGEN05_KERNEL = '''
"""Fused SwiGLU GEMM."""
from cutlass.cute.nvgpu import tcgen05


def swiglu_gemm(x):
    return tcgen05
'''


def test_a_flag_an_arm_turns_on_is_judged_by_the_kernel_its_reader_runs(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/layer.py": _FLAG_SETTER, "eng/kernels/swiglu_gemm.py": _TCGEN05_KERNEL})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/layer.py", 17)]
    assert found[0].extra["evidence"] == (
        "'tcgen05' imported at line 2 in eng.kernels.swiglu_gemm, which it calls"
    )


def test_a_flag_whose_reader_runs_a_portable_kernel_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/layer.py": _FLAG_SETTER})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/layer.py", 17)]


_BY_GENERATION = """
import torch

from kern import es_grouped_mm, es_sm100_grouped_mm, grouped_mm


def run(c, a, b, es):
    if torch.cuda.get_device_capability()[0] == 9 and es:
        es_grouped_mm(c, a, b)
    elif es:
        es_sm100_grouped_mm(c, a, b)
    else:
        grouped_mm(c, a, b)
"""

_HOPPER_ONLY = """
import torch

from kern import fast_mm, grouped_mm


def run(c, a, b):
    if torch.cuda.get_device_capability()[0] == 9:
        fast_mm(c, a, b)
    else:
        grouped_mm(c, a, b)
"""


def test_a_hopper_arm_beside_one_named_for_sm100_is_its_generation_s_kernel(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/moe.py": _BY_GENERATION})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/moe.py", 7)]
    assert "named for SM100 (calls es_sm100_grouped_mm())" in found[0].extra["evidence"]


def test_a_hopper_only_path_without_a_blackwell_counterpart_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/moe.py": _HOPPER_ONLY})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/moe.py", 7)]


def test_a_path_turned_on_for_one_model_shape_is_a_model_specific_loss(tmp_path: Path) -> None:
    layer = """
    import torch


    class Router(torch.nn.Module):
        def __init__(self, config):
            super().__init__()
            self.use_fp32_router = (
                config.hidden_size == 5120
                and config.num_experts == 256
                and torch.cuda.get_device_capability()[0] in (9, 10)
            )

        def forward(self, x):
            return fp32_router(x) if self.use_fp32_router else bf16_router(x)
    """
    found = _scan(tmp_path, {"eng/router.py": layer})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 7)]
    assert found[0].extra["tuning"] is True
    assert "config.hidden_size == 5120, config.num_experts == 256" in found[0].consequence


def test_a_function_s_supported_geometry_is_no_model_shape(tmp_path: Path) -> None:
    helper = """
    import torch


    def use_fused_tail(x, hidden_size, router_topk):
        return bool(
            hidden_size == 6144
            and router_topk == 6
            and torch.cuda.get_device_capability(x.device) == (10, 0)
        )
    """
    found = _scan(tmp_path, {"eng/tail.py": helper})
    assert [f.severity for f in found] == ["medium"]


def test_an_arch_a_comment_names_as_left_out_is_not_one_it_is_written_for(tmp_path: Path) -> None:
    handler = """
    import torch


    def handle_fa4(attn):
        # The absorbed form feeds q_nope through the qv argument, which the kernel only
        # implements on SM100/SM110 (not SM120); keep the chunked path elsewhere.
        if torch.cuda.get_device_capability()[0] not in (10, 11):
            return "chunked"
        return attn.absorbed()
    """
    found = _scan(tmp_path, {"eng/handler.py": handler})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/handler.py", 7)]
    assert "naming 10.0, 11.0" in found[0].extra["evidence"]


_DEFAULT_PICKER = """
import torch


def fused_kda_prefill_default(runner):
    if torch.cuda.get_device_capability() in ((10, 0), (10, 3)):
        return "fused"
    return None
"""

_KERNEL_CLASS = """
import torch


class FusedKDAPrefillKernel:
    def __init__(self):
        if torch.cuda.get_device_capability() not in ((10, 0), (10, 3)):
            raise ValueError("Fused KDA prefill requires SM100 or SM103")
"""


def test_a_default_the_engine_refuses_where_it_runs_it_is_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _DEFAULT_PICKER, "eng/kernels/prefill.py": _KERNEL_CLASS})
    picker = [f for f in found if f.path == "eng/backend.py"]
    assert [(f.severity, f.line) for f in picker] == [("low", 5)]
    assert picker[0].extra["evidence"].startswith("the engine's own check at eng/kernels/prefill.py:6")


def test_a_refusal_is_no_evidence_for_itself(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/kernels/prefill.py": _KERNEL_CLASS})
    assert "engine's own check" not in str(found[0].extra.get("evidence", ""))


def test_a_path_calling_a_wrapper_of_deepgemm_is_expected(tmp_path: Path) -> None:
    caller = """
    import torch

    from eng.kernels.fused_gate import fused_gate


    def gate(x, w):
        if torch.cuda.get_device_capability()[0] == 10:
            return fused_gate(x, w)
        return torch.softmax(x @ w, -1)
    """
    found = _scan(tmp_path, {"eng/gate.py": caller, "eng/kernels/fused_gate.py": _WRAPPER})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/gate.py", 7)]
    assert "'deep_gemm.fused_gate' (line 8)" in found[0].extra["evidence"]


def test_hpc_is_spelled_as_a_word_only() -> None:
    from capgap.judging.evidence import needs_in

    assert needs_in("_hpc_ihc_op") == [("wgmma", "tcgen05")]
    assert needs_in("import hpc") == [("wgmma", "tcgen05")]
    assert needs_in("hpcx_path") == []
    assert needs_in("ithpc") == []
