"""What the other GPUs a decision lets in say about its path.

- gate-admits-unsupported: a target from before the feature a path is said to need, let in with
  other GPUs from before it (`major >= 8` on an Ada, for wgmma), is served as they are; a target
  from after it is not (FA3 sends 9.0 and newer to wgmma, whatever it runs an Ampere on).
- gate-excludes-arch: a branch taken by GPUs both older and newer than the target that all lack a
  generation's feature the target has (`is_sm90 or is_sm120` read on a B300, which has tcgen05)
  is their way around that lack; the target takes its own.
- A decision that only spells each arch's build-target suffix (`"a"`, `"f"`, `""`) is no path.
"""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_FROM_AMPERE = """
import torch


def attention(q):
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        return warpgroup_attention(q)
    return q
"""

_FROM_HOPPER = """
import torch


def attention(q):
    major, _ = torch.cuda.get_device_capability()
    if major >= 9 and major != 10:
        return warpgroup_attention(q)
    return q
"""

_FMHA_V2 = """
import torch


class Backend:
    def __init__(self, q):
        self.use_fmha_v2 = False
        major, minor = torch.cuda.get_device_capability()
        if major == {majors}:
            self.use_fmha_v2 = True
            self.prefill = load_fmha_v2_prefill(q)
        self.q = q
"""

_SUFFIX = """
import torch


def _cuda_arch_suffix(major: int, minor: int) -> str:
    if major == 9:
        return "a"
    if major == 12:
        if minor == 0 and _jit_cuda_version() >= (12, 9):
            return "f"
        return "a"
    if major >= 10:
        return "a"
    return ""


def target():
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}{_cuda_arch_suffix(major, minor)}"
"""


def _admits(found: list) -> list:
    return [f for f in found if f.rule == "gate-admits-unsupported"]


def test_a_gpu_from_before_the_feature_let_in_with_others_from_before_it_is_served(tmp_path: Path) -> None:
    # an Ada beside an Ampere: the path serves GPUs without wgmma (FA3's SM80 mainloop)
    assert _admits(_scan(tmp_path, {"eng/attn.py": _FROM_AMPERE}, arch="8.9")) == []


def test_a_gpu_from_after_the_feature_is_not_served_by_what_older_ones_run(tmp_path: Path) -> None:
    # FA3 runs an Ampere on kernels of its own and sends 9.0 and newer to wgmma: 12.0 fails there
    found = _admits(_scan(tmp_path, {"eng/attn.py": _FROM_AMPERE}))
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/attn.py", 6)]


def test_a_newer_gpu_let_in_without_the_feature_is_no_excuse(tmp_path: Path) -> None:
    found = _admits(_scan(tmp_path, {"eng/attn.py": _FROM_HOPPER}))
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/attn.py", 6)]
    assert "wgmma" in found[0].message


def test_a_branch_of_older_and_newer_gpus_lacking_what_the_target_has_is_theirs(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _FMHA_V2.format(majors="9 or major == 12")}, arch="10.3")
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/backend.py", 8)]
    assert found[0].extra["evidence"] == "9.0, 12.0, 12.1 all lack tcgen05, which 10.3 has"
    assert "the path of GPUs without tcgen05" in found[0].consequence


def test_a_branch_of_older_gpus_only_is_still_a_path_the_target_misses(tmp_path: Path) -> None:
    # no GPU newer than the target takes it: an age cutoff, whatever the older ones lack
    found = _scan(tmp_path, {"eng/backend.py": _FMHA_V2.format(majors="9")}, arch="10.3")
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/backend.py", 8)]


def test_a_build_target_suffix_is_no_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/arch.py": _SUFFIX}, arch="8.9")
    assert [f for f in found if f.rule == "gate-excludes-arch" and f.severity != "low"] == []
    assert [f for f in found if f.line in range(5, 14)] == []
