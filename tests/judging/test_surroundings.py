"""The text around a decision that says what its paths run (judging.surroundings), one pattern per
test: the module's docstring, the comment above an allow-list the test reads, the words that
open the enclosing function, clauses of a sentence read apart, and predicate names that name a
kernel family."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import prose
from tests.judging.test_decisions import _brief, _scan

_PREDICATE = """
{doc}
import torch


def has_fused_router(tokens: int) -> bool:
    {opening}
    return torch.cuda.get_device_capability()[0] == 10 and tokens <= 16
"""


def _predicate(tmp_path: Path, doc: str = "", opening: str = "") -> list[str]:
    """The severities of the findings on the predicate."""
    text = _PREDICATE.format(doc=doc, opening=opening)
    return [f.severity for f in _scan(tmp_path, {"eng/router.py": text})]


def test_a_predicate_with_no_words_around_it_is_a_gap(tmp_path: Path) -> None:
    assert _predicate(tmp_path) == ["medium"]


def test_the_module_docstring_naming_the_archs_it_requires_is_evidence(tmp_path: Path) -> None:
    doc = '"""Fused router GEMM. The kernels are SM100 only."""'
    assert _predicate(tmp_path, doc=doc) == ["low"]


def test_a_module_docstring_that_only_tells_where_it_runs_is_none(tmp_path: Path) -> None:
    doc = '"""Fused router GEMM with a small-batch SM100 fusion."""'
    assert _predicate(tmp_path, doc=doc) == ["medium"]


def test_a_library_version_is_no_open_ended_arch(tmp_path: Path) -> None:
    doc = '"""Scores candidates with the sparse kernels (mylib >= 2.8, SM100 only)."""'
    assert _predicate(tmp_path, doc=doc) == ["low"]


def test_the_function_opening_naming_an_instruction_is_evidence(tmp_path: Path) -> None:
    opening = "# Large pages only run on the trtllm-gen dynamic kernel."
    assert _predicate(tmp_path, opening=opening) == ["low"]


def test_a_function_opening_naming_what_no_owner_has_is_none(tmp_path: Path) -> None:
    opening = "# The Hopper path uses wgmma; this one does not."
    assert _predicate(tmp_path, opening=opening) == ["medium"]


_ALLOW_LIST = """
import torch

# The fused kernel is built for sm100/sm103 only.
_CAPS = (100, 103)


def fused_ok() -> bool:
    major, minor = torch.cuda.get_device_capability()
    if major * 10 + minor not in _CAPS:
        print("fused kernel disabled")
        return False
    return True
"""


def test_the_comment_above_the_allow_list_a_test_reads_is_evidence(tmp_path: Path) -> None:
    found = _brief(_scan(tmp_path, {"eng/fused.py": _ALLOW_LIST}))
    assert found == [("gate-excludes-arch", "low", "eng/fused.py", 9)]


def test_without_that_comment_the_allow_list_is_a_gap(tmp_path: Path) -> None:
    text = _ALLOW_LIST.replace("# The fused kernel is built for sm100/sm103 only.\n", "")
    found = _brief(_scan(tmp_path, {"eng/fused.py": text}))
    assert found == [("gate-excludes-arch", "medium", "eng/fused.py", 8)]


_NAMED_BY_PREDICATE = """
import torch

from eng.libs import {name}


def moe_ok(tokens: int) -> bool:
    return {name}() and torch.cuda.get_device_capability()[0] == 10 and tokens > 0
"""


def _library(tmp_path: Path, name: str) -> list[str]:
    files = {
        "eng/libs.py": f"def {name}():\n    return True\n",
        "eng/moe.py": _NAMED_BY_PREDICATE.format(name=name),
    }
    return [f.severity for f in _scan(tmp_path, files) if f.path == "eng/moe.py"]


def test_a_predicate_naming_an_sm100_only_kernel_family_is_evidence(tmp_path: Path) -> None:
    assert _library(tmp_path, "has_flashinfer_trtllm_fused_moe") == ["low"]


def test_a_predicate_naming_a_library_of_several_mma_generations_is_none(tmp_path: Path) -> None:
    assert _library(tmp_path, "is_deep_gemm_supported") == ["medium"]


def test_a_predicate_that_spells_an_arch_is_no_evidence(tmp_path: Path) -> None:
    assert _library(tmp_path, "is_sm100a_ready") == ["medium"]


def test_a_sentence_is_read_clause_by_clause() -> None:
    sentence = "The GEMM supports SM100 and SM103, but rejects SM90 during backend validation."
    assert prose.clauses(sentence) == [
        "The GEMM supports SM100 and SM103",
        "rejects SM90 during backend validation.",
    ]
    assert prose.clauses("Online updates are not supported while Hopper runs it.") == [
        "Online updates are not supported while Hopper runs it."
    ]


def test_a_validation_clause_hides_no_requirement_beside_it(tmp_path: Path) -> None:
    opening = '"""The GEMM supports SM100 and SM103, but rejects SM90 during backend validation."""'
    assert _predicate(tmp_path, opening=opening) == ["low"]


def test_a_long_sentence_is_kept_around_the_arch_it_names() -> None:
    sentence = "word " * 80 + "the kernels are SM100 only."
    (kept,) = prose.arch_sentences(sentence)
    assert "SM100 only" in kept


_SETUP = """
import torch


def pick_w4a16_kernel(kernel):
    major, minor = torch.cuda.get_device_capability()
    compute_capability = major * 10 + minor
    {comment}
    cutedsl_ok, _ = kernel.is_supported(compute_capability)
    if compute_capability in (100, 103) and cutedsl_ok:
        return "cutedsl_w4a16"
    return None
"""


def test_the_comment_above_what_a_test_reads_speaks_for_the_test(tmp_path: Path) -> None:
    """aphrodite 0.24.1's NVFP4 W4A16 choice: "Weight-only: prefer FlashInfer CuTe-DSL W4A16 on
    SM100/103, otherwise Marlin." above `cutedsl_ok, _ = ...is_supported(cc)`, then the test."""
    comment = "# Weight-only: prefer FlashInfer CuTe-DSL W4A16 on SM100/103, otherwise Marlin."
    (found,) = _scan(tmp_path, {"eng/linear.py": _SETUP.format(comment=comment)})
    assert found.severity == "low"
    assert "prefer FlashInfer CuTe-DSL W4A16 on SM100/103" in found.consequence


def test_a_comment_above_a_statement_the_test_does_not_read_is_not_its(tmp_path: Path) -> None:
    comment = "# Weight-only: prefer FlashInfer CuTe-DSL W4A16 on SM100/103, otherwise Marlin."
    text = _SETUP.format(comment=comment).replace("    cutedsl_ok, _ =", "    other_ok, _ =")
    text = text.replace("and cutedsl_ok", "and kernel.ready")
    (found,) = _scan(tmp_path, {"eng/linear.py": text})
    assert found.severity == "medium"


_RETURNED_CONSTANT = """
import torch

PAGE = 128
# QMUL4 needs PTX ISA 9.4 and an sm_100a/sm_103a target.
QMUL4_MIN_PTX = 94


def qmul4_supported(ptx: int) -> bool:
    major, minor = torch.cuda.get_device_capability()
    if major * 10 + minor not in (100, 103):
        return False
    return ptx >= QMUL4_MIN_PTX
"""


def test_the_comment_above_a_constant_the_path_returns_a_test_of_is_evidence(tmp_path: Path) -> None:
    # the constant names no capability (the statement cut drops it); the path's own test reads it
    found = _scan(tmp_path, {"eng/qmul4.py": _RETURNED_CONSTANT})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/qmul4.py", 10)]
    assert "QMUL4 needs PTX ISA 9.4" in found[0].extra["evidence"]


def test_without_it_the_path_is_a_gap(tmp_path: Path) -> None:
    text = _RETURNED_CONSTANT.replace("# QMUL4 needs PTX ISA 9.4 and an sm_100a/sm_103a target.\n", "")
    found = _brief(_scan(tmp_path, {"eng/qmul4.py": text}))
    assert found == [("gate-excludes-arch", "medium", "eng/qmul4.py", 9)]
