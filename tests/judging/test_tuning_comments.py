"""A gate whose own comment says it is there for tuning ("Check if running on Blackwell (SM100+)
for kernel tuning", vLLM's Mamba mixer) hands one generation the launch numbers it was measured
with; the target keeps the defaults the other generations keep: low, naming the comment. Not when
the words are a module's docstring about its measured tables, nor when more than one generation
gets the path (a tuned table with no row for the target is a medium gap)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_MIXER = """
{doc}
import torch


class Mixer:
    def __init__(self):
        {comment}
        self.is_blackwell = torch.cuda.get_device_capability()[0] {test}

    def forward(self, x):
        return selective_update(x, is_blackwell=self.is_blackwell)
"""


def _found(tmp_path: Path, doc: str = "", comment: str = "", test: str = "== 10") -> list:
    text = _MIXER.format(doc=doc, comment=comment or "pass", test=test)
    return [f for f in _scan(tmp_path, {"eng/mixer.py": text}) if f.rule == "gate-excludes-arch"]


def test_a_gate_its_comment_calls_tuning_is_one_generation_s_numbers(tmp_path: Path) -> None:
    found = _found(tmp_path, comment="# Check if running on Blackwell (SM100+) for kernel tuning")
    assert [f.severity for f in found] == ["low"]
    assert "for kernel tuning" in found[0].extra["evidence"]
    assert found[0].extra["tuning"] is True


def test_without_the_comment_the_flag_stays_a_loss(tmp_path: Path) -> None:
    assert [f.severity for f in _found(tmp_path)] == ["medium"]


def test_a_module_docstring_about_tuned_tables_says_nothing_of_this_gate(tmp_path: Path) -> None:
    doc = '"""Each supported capability carries its own table, tuned on that GPU (Blackwell SM100)."""'
    assert [f.severity for f in _found(tmp_path, doc=doc)] == ["medium"]


def test_tuning_more_than_one_generation_gets_is_no_one_generation_s_numbers(tmp_path: Path) -> None:
    comment = "# Hopper and Blackwell (SM90, SM100) launch config for kernel tuning"
    found = _found(tmp_path, comment=comment, test="in (9, 10)")
    assert [f.severity for f in found] == ["medium"]
