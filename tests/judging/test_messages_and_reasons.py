"""How the words of a message and the returns of a reason function read: an arch named in a log
line is no evidence of a need (a requirement in words is), a function that answers with reasons
accepts with None, what is left after guard clauses is a path unless it only refuses, and what
follows a checking call that raises for the target is not reached."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.evidence import arch_names_unsaid

from .test_decisions import _brief, _scan

_FLAG = """
import torch
import logging

logger = logging.getLogger(__name__)


def configure(cfg):
    major, _ = torch.cuda.get_device_capability()
    if cfg.kv == "auto" and major == 10:
        cfg.kv = "fp8"
        {said}
"""


def test_an_arch_named_in_a_log_line_is_no_need_but_a_requirement_is(tmp_path: Path) -> None:
    logs = _FLAG.format(said='logger.info("Using fp8 KV on SM10x")')
    logged = _scan(tmp_path / "log", {"eng/config.py": logs})
    assert _brief(logged) == [("gate-excludes-arch", "medium", "eng/config.py", 9)]
    says = _FLAG.format(said='cfg.why = "its layout needs SM10x"')
    required = _scan(tmp_path / "req", {"eng/config.py": says})
    assert _brief(required) == [("gate-excludes-arch", "low", "eng/config.py", 9)]
    assert required[0].extra["evidence"].startswith("'sm10x'")


def test_arch_names_are_blanked_only_inside_prose_strings() -> None:
    code = 'x = "fp8_e4m3"\nlog("Using fp8 on SM10x")\nflags = ["-arch=sm_100a"]\nrun_sm100_kernel()\n'
    unsaid = arch_names_unsaid(code)
    assert len(unsaid) == len(code) and unsaid.count("\n") == code.count("\n")
    assert "SM10x" not in unsaid
    assert '"-arch=sm_100a"' in unsaid and "run_sm100_kernel" in unsaid
    # a message over two literals keeps the requirement its first one states
    two = 'raise RuntimeError("X requires its "\n    "API, CUDA SM10x, bf16")'
    assert arch_names_unsaid(two) == two


_REASONS = """
import torch


def why_not(page_size, device):
    if page_size != 64:
        return f"page_size={page_size}"
    capability = torch.cuda.get_device_capability(device)
    if capability[0] == 10:
        if page_size > 128:
            return "page size not supported"
        return None
    if capability[0] == 12:
        return None
    return "FAST_BACKEND requires SM10x or SM12x"
"""


def test_in_a_function_that_answers_with_reasons_none_accepts(tmp_path: Path) -> None:
    """12.0 has its own branch that says yes (None); the others are refused by a reason."""
    assert _scan(tmp_path, {"eng/backend.py": _REASONS}) == []


def test_a_reason_left_after_the_guards_refuses_the_archs_it_reaches(tmp_path: Path) -> None:
    """12.0 is refused by the reason the guard clauses leave; 10.0 gets its own yes: a gap."""
    text = _REASONS.replace("    if capability[0] == 12:\n        return None\n", "")
    found = _scan(tmp_path, {"eng/backend.py": text})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/backend.py", 8)]
    assert "12.0 carries on (returns 'FAST_BACKEND requires SM10x or SM12x')" in found[0].message


def test_name_like_strings_and_none_are_answers_not_reasons(tmp_path: Path) -> None:
    """`return "sm120"` ... `return None`: a picker; None is its answer for the rest."""
    text = """
    import torch

    def arch_tag():
        major, _ = torch.cuda.get_device_capability()
        if major == 10:
            return "sm100"
        if major == 12:
            return "sm120"
        return None
    """
    assert _scan(tmp_path, {"eng/tags.py": text}) == []


def test_what_follows_a_check_that_raises_for_the_target_is_not_reached(tmp_path: Path) -> None:
    """`decode_arch(cc)` called as a statement raises for 12.0: the M=64 tile choice below it is
    never 12.0's to miss; the check itself is the finding."""
    text = """
    def decode_arch(cc):
        if cc not in ((10, 0), (10, 3)):
            raise ValueError(f"MLA decode requires SM100 or SM103, got {cc}")
        return f"sm_{cc[0]}{cc[1]}"


    def tilers(heads, cc):
        decode_arch(cc)
        if heads <= 64 and cc == (10, 0):
            return (64, 128)
        return (128, 128)
    """
    found = _scan(tmp_path / "checked", {"eng/mla.py": text})
    assert [f.line for f in found] == [2]
    unchecked = _scan(tmp_path / "unchecked", {"eng/mla.py": text.replace("        decode_arch(cc)\n", "")})
    assert [f.line for f in unchecked] == [2, 8]


def test_a_call_kept_in_an_assignment_that_raises_is_judged_in_the_callee(tmp_path: Path) -> None:
    """`n, m = constraints(cc)` raises for 12.0 inside `constraints`: one finding, there, not a
    second one reading the tuple as a flag."""
    text = """
    def constraints(cc):
        major, minor = cc
        if major == 8:
            return 4, 2
        elif major == 9:
            return 8, 8
        else:
            raise ValueError(f"Unsupported compute capability: {major}.{minor}")


    def divide(total, cc):
        n, m = constraints(cc)
        return [x for x in range(n, total, m)]
    """
    found = _scan(tmp_path, {"eng/split.py": text})
    assert [(f.line, f.severity) for f in found] == [(5, "medium")]


def test_a_guard_clause_another_test_follows_leaves_the_path_to_that_test(tmp_path: Path) -> None:
    """`if major == 11: raise` lets 12.0 past, into `elif major >= 10:`, which sends it to the
    tcgen05 kernel: one finding, at the test that picks the path, not at the guard too."""
    text = """
    import torch

    def grouped_gemm(a):
        major, minor = torch.cuda.get_device_capability(a.device)
        if major == 11 and minor == 0:
            raise ValueError("SM110 is not supported")
        if major == 9:
            return _gemm_wgmma_sm90(a)
        elif major >= 10:
            from .blackwell import gemm_tcgen05_sm100
            return gemm_tcgen05_sm100(a)
        else:
            raise ValueError("unsupported")
    """
    found = _scan(tmp_path, {"eng/gemm.py": text})
    assert [(f.rule, f.line) for f in found if f.severity != "low"] == [("gate-admits-unsupported", 9)]
