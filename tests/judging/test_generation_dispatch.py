"""A dispatch giving each generation a kernel of its own, every other GPU refused in words naming
those generations: the target lacks what each generation's kernel runs on (an expected gap)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_DISPATCH = """
import torch

import kernels


def run(q, k, v):
    capability = torch.cuda.get_device_capability(q.device)
    if capability == (9, 0):
        return kernels.hopper_prefill(q, k, v)
    if capability in ((10, 0), (10, 3)):
        return kernels.blackwell_prefill(q, k, v)
    raise ValueError("{words}; found SM{capability[0]}{capability[1]}.")
"""


def _found(tmp_path: Path, words: str) -> list[tuple[str, str, str, int]]:
    return _brief(_scan(tmp_path, {"eng/dispatch.py": _DISPATCH.replace("{words}", words)}))


def test_a_kernel_per_generation_and_a_refusal_naming_them_is_expected(tmp_path: Path) -> None:
    found = _found(tmp_path, "Sparse softmax requires Hopper SM90 or Blackwell SM100/SM103")
    assert found == [("gate-excludes-arch", "low", "eng/dispatch.py", 8)]


def test_a_refusal_that_names_no_generation_leaves_the_loss(tmp_path: Path) -> None:
    found = _found(tmp_path, "Sparse softmax is not supported on this GPU")
    assert found == [("gate-excludes-arch", "medium", "eng/dispatch.py", 8)]


def test_one_path_shared_by_both_generations_names_no_need(tmp_path: Path) -> None:
    # Hopper and datacenter Blackwell run one path: "SM90 or SM100" together name no MMA
    shared = _DISPATCH.replace("capability == (9, 0)", "capability in ((9, 0), (10, 0))")
    found = _brief(_scan(tmp_path, {"eng/dispatch.py": shared.replace("{words}", "requires SM90 or SM100")}))
    assert [(sev, line) for _, sev, _, line in found] == [("medium", 8)]
