"""The words opening a function of the file that a gate's test calls
(judging.surroundings.helper_sentences), read as the comments around the gate are: what they say the
path is written for, and what they say the target goes without (judging.keyed.goes_without)."""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.arch import all_facts
from capgap.judging.keyed import goes_without
from tests.judging.test_decisions import _scan

_GATED = """
import torch


def _tma_gemm_arch(index):
    {comment}
    return torch.cuda.get_device_capability(index)[0] == 10


def tma_gemm_ok(a, index):
    if a.shape[0] % 16:
        return False
    if not _tma_gemm_arch(index):
        return False
    return launch(a)
"""


def _gated(tmp_path: Path, comment: str, arch: str = "12.0") -> list[tuple[str, str]]:
    text = _GATED.format(comment=comment or "pass")
    return [(f.severity, f.extra.get("evidence", "")) for f in _scan(tmp_path, {"eng/gemm.py": text}, arch)]


def test_a_helper_comment_saying_the_target_has_too_little_shared_memory_makes_it_expected(
    tmp_path: Path,
) -> None:
    comment = "# 4 stages of 128 x 128 fp8 tiles need 128 KB of shared memory, more than sm_120 / sm_89 have."
    [(severity, evidence)] = _gated(tmp_path, comment)
    assert severity == "low"
    assert "more than sm_120" in evidence


def test_without_that_comment_the_gate_is_a_gap(tmp_path: Path) -> None:
    assert [s for s, _ in _gated(tmp_path, "")] == ["medium"]


def test_a_helper_comment_that_names_the_target_without_a_lack_is_no_evidence(tmp_path: Path) -> None:
    assert [s for s, _ in _gated(tmp_path, "# The sm_120 port is tracked in issue 42.")] == ["medium"]


def test_a_helper_comment_naming_another_arch_as_lacking_says_nothing_of_the_target(
    tmp_path: Path,
) -> None:
    comment = "# The tiles need more shared memory than sm_89 has."
    assert [s for s, _ in _gated(tmp_path, comment)] == ["medium"]


def test_the_comment_is_read_for_the_family_it_names(tmp_path: Path) -> None:
    comment = "# Consumer Blackwell (SM12x) cannot launch these tiles."
    assert [s for s, _ in _gated(tmp_path, comment, "12.1")] == ["low"]


def test_a_helper_docstring_naming_the_archs_it_supports_is_evidence(tmp_path: Path) -> None:
    comment = '"""The cute-dsl GEMM this picks supports SM100 and SM103 only (tcgen05)."""'
    [(severity, evidence)] = _gated(tmp_path, comment)
    assert severity == "low"
    assert "the words opening _tma_gemm_arch" in evidence


@pytest.mark.parametrize(
    "sentence",
    [
        "need 128 KB of shared memory, more than sm_120 / sm_89 have",
        "Architectures with only fa2 (e.g. SM89, SM120) cannot run it",
        "16 heads at G=2 exceeds SM120's 100 KB with the tuned tile",
        "SM120 has no tcgen05, so the products use mma.sync",
        "consumer Blackwell (SM120/121) can't use GVR",
        "the LB path needs multicast, which SM120's 1x1x1 cluster shape lacks",
        "Not supported on SM120.",
    ],
)
def test_sentences_saying_the_target_lacks_something(sentence: str) -> None:
    assert goes_without([sentence], all_facts()["12.0"])


@pytest.mark.parametrize(
    "sentence",
    [
        "SM120 uses mma.sync for these products",
        "Works on sm_12x and sm_100",
        "need more shared memory than sm_89 has",
    ],
)
def test_sentences_that_say_no_such_thing_of_the_target(sentence: str) -> None:
    assert not goes_without([sentence], all_facts()["12.0"])
