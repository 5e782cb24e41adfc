"""Words around a decision explain a path only for the archs they speak for.

- A need read from words is a need of every arch that gets the path: a docstring naming Hopper
  above `major in (8, 9)` says nothing of wgmma, since Ampere runs the path too (vllm-omni 0.30.0
  `ring.py:65`, FA2's "supports Ampere, Ada, and Hopper").
- A sentence calling a path a measured preference explains the gate only when it names every
  generation that gets it: "performance-tuned for SM90" above a set of 9.0, 10.0 and 10.3 says why
  Hopper has it, not why datacenter Blackwell does (vllm-omni 0.30.0 `ltx2/ops/__init__.py:71`).
"""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_FA2_RING = """
import torch


def can_use_fa2(device) -> bool:
    \"\"\"Return whether the FA2 backend supports ``device``.

    FA2's CUDA backend supports Ampere, Ada, and Hopper.
    \"\"\"
    major, _minor = torch.cuda.get_device_capability(device)
    return major in (8, 9)
"""


def test_a_docstring_naming_hopper_is_no_wgmma_need_of_a_path_ampere_runs(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/ring.py": _FA2_RING})
    assert [f.rule for f in found] == ["gate-excludes-arch"]
    assert "wgmma" not in found[0].consequence
    assert "wgmma" not in str(found[0].extra.get("evidence", ""))


def test_the_same_docstring_speaks_for_a_path_only_hopper_gets(tmp_path: Path) -> None:
    text = _FA2_RING.replace("major in (8, 9)", "major == 9")
    found = _scan(tmp_path, {"eng/ring.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/ring.py", 10)]
    assert "wgmma" in found[0].consequence


_FUSIONS = """
import torch

# Pointwise fusions are checked bit-for-bit on their first run. The FNA schedule is
# performance-tuned for SM90 and has no silent fallback, so qualify the two paths independently.
_FUSION_CAPABILITIES = frozenset({90, 100, 103})
_FNA_CAPABILITIES = frozenset({90})


def resolve_operators(device):
    major, minor = torch.cuda.get_device_capability(device)
    capability = major * 10 + minor
    if capability not in _FUSION_CAPABILITIES:
        return None
    return operator_set(capability in _FNA_CAPABILITIES)
"""


def test_a_preference_named_for_hopper_alone_does_not_explain_blackwell_s_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/ops.py": _FUSIONS})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/ops.py", 12)]


def test_a_preference_naming_every_generation_that_gets_the_path_explains_it(tmp_path: Path) -> None:
    text = _FUSIONS.replace("performance-tuned for SM90", "performance-tuned for SM90 and SM100")
    found = _scan(tmp_path, {"eng/ops.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/ops.py", 12)]
    assert "a preference or workaround" in found[0].consequence
