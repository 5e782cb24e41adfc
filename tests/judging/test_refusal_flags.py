"""A branch that only sets a flag its function then refuses on is a restriction (unsloth 2026.10.9's
`check_vllm_torch_sm100_compatibility`: `has_sm100 = True; break`, `if not has_sm100: return`, then
a raise; judged not-a-gap in the held-out set). A flag read anywhere else keeps the branch a path."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import refusalflags
from tests.judging.test_decisions import _brief, _scan

_DETECTS_TO_REFUSE = """
import torch
from importlib.metadata import version


def check_old_stack():
    if version("torch") >= "2.9":
        return
    try:
        has_sm100 = False
        name = None
        for i in range(torch.cuda.device_count()):
            major, minor = torch.cuda.get_device_capability(i)
            if major == 10:
                has_sm100 = True
                name = torch.cuda.get_device_name(i)
                break
        if not has_sm100:
            return
    except Exception:
        return
    try:
        other = version("other")
    except Exception:
        other = "unknown"
    raise RuntimeError(f"{name}: other {other} crashes on SM100 with torch < 2.9")
"""


def _gates(found: list) -> list:
    return [f for f in found if f.rule == "gate-excludes-arch"]


def test_a_flag_whose_yes_leads_only_to_a_raise_costs_the_target_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/checks.py": _DETECTS_TO_REFUSE})
    assert _gates(found) == []


def test_a_flag_tested_by_an_if_that_raises_is_a_restriction_too(tmp_path: Path) -> None:
    text = """
    import torch


    def check():
        bad = False
        if torch.cuda.get_device_capability()[0] == 10:
            bad = True
        if bad:
            raise RuntimeError("this build crashes on SM100")
        return 1
    """
    assert _gates(_scan(tmp_path, {"eng/checks.py": text})) == []


def test_a_flag_the_function_answers_with_is_a_path(tmp_path: Path) -> None:
    text = _DETECTS_TO_REFUSE.replace(
        "        if not has_sm100:\n            return\n", "        return has_sm100\n"
    )
    assert "return has_sm100" in text
    found = _gates(_scan(tmp_path, {"eng/checks.py": text}))
    assert [(f.path, f.line) for f in found] == [("eng/checks.py", 13)]


def test_a_flag_past_whose_guard_real_work_runs_is_a_path(tmp_path: Path) -> None:
    text = """
    import torch


    def pick(x):
        fast = False
        if torch.cuda.get_device_capability()[0] == 10:
            fast = True
        if not fast:
            return torch.mm(x, x)
        return torch.ops.eng.fast_mm(x)
    """
    assert _brief(_gates(_scan(tmp_path, {"eng/pick.py": text}))) == [
        ("gate-excludes-arch", "medium", "eng/pick.py", 6)
    ]


def test_reading_the_function_on_its_own_text() -> None:
    source = """    def f(cap):
        flag = False
        if cap == 100:
            flag = True
        if not flag:
            return
        note = "x"
        raise ValueError("no " + note)
"""
    words = refusalflags.refusal_it_leads_to(source, 40, 42, {"flag"})
    assert words is not None and "ValueError" in words and "line 47" in words
    # a flag read before the decision (a loop's next round) or by a call is no plain refusal
    looped = source.replace('        note = "x"\n', "        use(flag)\n")
    assert refusalflags.refusal_it_leads_to(looped, 40, 42, {"flag"}) is None
    assert refusalflags.flags_set([]) is None


_REASONS = """
import torch


def maybe_init_gemm_rs(dtype, tp_size):
    if dtype != torch.bfloat16:
        reason = "the model dtype is not BF16"
    elif torch.cuda.get_device_capability()[0] != 10:
        reason = "the device is not SM100-family"
    elif tp_size < 2:
        reason = "TP size is not in the supported range"
    else:
        reason = None

    if reason is not None:
        print("GEMM-RS is disabled because", reason)
        return False

    {path}
    init(tp_size)
    return True
"""

_TCGEN05_KERNEL = """
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05


@cute.kernel
def gemm_rs(x):
    tcgen05.mma(x)


def init(n):
    return gemm_rs(n)
"""


def test_a_reason_chain_s_path_is_read_past_the_check_that_turns_reasons_away(tmp_path: Path) -> None:
    files = {
        "eng/__init__.py": "",
        "eng/model.py": _REASONS.replace("{path}", "from eng.gemm_rs import init"),
        "eng/gemm_rs.py": _TCGEN05_KERNEL,
    }
    found = _gates(_scan(tmp_path, files))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/model.py", 7)]
    assert "tcgen05" in found[0].extra["evidence"]


def test_a_reason_chain_whose_path_needs_nothing_the_target_lacks_stays_medium(tmp_path: Path) -> None:
    files = {
        "eng/__init__.py": "",
        "eng/model.py": _REASONS.replace("{path}", "from eng.plain import init"),
        "eng/plain.py": "import torch\n\n\ndef init(n):\n    return torch.zeros(n)\n",
    }
    assert _brief(_gates(_scan(tmp_path, files))) == [("gate-excludes-arch", "medium", "eng/model.py", 7)]


def test_the_lines_past_a_gate_are_those_the_branch_s_value_gets_through() -> None:
    source = """def f(cap):
    if cap == 100:
        ok = True
    else:
        ok = False
    if not ok:
        return None
    run()
    return 1
"""
    assert refusalflags.path_past_gate(source, 1, 2, {"ok": True}) == (8, 9)
    assert refusalflags.path_past_gate(source, 1, 2, {"ok": False}) is None  # turned away
    assert refusalflags.constants_set([]) is None


_BUILDER = """
import torch


class OpBuilder:
    def is_compatible(self, verbose=False):
        cuda_okay = True
        cuda_capability = torch.cuda.get_device_capability()[0]
        if {test}:
            if verbose:
                self.warning("This op needs another GPU")
            cuda_okay = {value}
        return super().is_compatible(verbose) and cuda_okay
"""


def test_a_branch_that_logs_and_sets_the_answer_false_is_a_restriction(tmp_path: Path) -> None:
    """DeepSpeed's op builders: `if ...: if verbose: self.warning(...); cuda_okay = False`, then
    `return super().is_compatible(verbose) and cuda_okay`. 12.0, left out, is not refused."""
    code = _BUILDER.format(test="cuda_capability in (9, 10)", value="False")
    assert _scan(tmp_path, {"eng/builder.py": code}) == []


def test_the_target_given_that_refusal_is_told_what_it_leads_to(tmp_path: Path) -> None:
    code = _BUILDER.format(test="cuda_capability >= 12", value="False")
    (found,) = _scan(tmp_path, {"eng/builder.py": code})
    assert "sets cuda_okay, which leads only to: returns False (line 12)" in found.message


def test_a_branch_that_sets_the_answer_true_is_still_a_path(tmp_path: Path) -> None:
    code = _BUILDER.format(test="cuda_capability in (9, 10)", value="True")
    (found,) = _scan(tmp_path, {"eng/builder.py": code})
    assert found.severity == "medium"


_TOOLKIT = """
import torch


def is_compatible():
    cuda_capability = torch.cuda.get_device_capability()[0]
    if cuda_capability < 7:
        return False
    torch_cuda_major = int(torch.version.cuda.split(".")[0])
    cuda_major, _ = installed_cuda_version()
    if torch_cuda_major >= 12 and cuda_major >= 12:
        return load_fast_op()
    return load_op()
"""


def test_a_cuda_toolkit_major_is_no_capability(tmp_path: Path) -> None:
    """DeepSpeed's `torch_cuda_major = int(torch.version.cuda.split('.')[0])`: the CUDA version torch
    was built with, whatever its name ends in."""
    assert _scan(tmp_path, {"eng/builder.py": _TOOLKIT}, arch="9.0") == []
