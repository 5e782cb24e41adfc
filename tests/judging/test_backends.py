"""A backend a sibling gets by enum member is judged by the capability check of its own class."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.backends import picked
from tests.judging.test_decisions import _brief, _scan

_SELECT = """
import torch


def priorities():
    if torch.cuda.get_device_capability()[0] == 10:
        return [PrefillBackendEnum.RAGGED, PrefillBackendEnum.{second}]
    return [PrefillBackendEnum.FLASH]
"""

# the member's module (`ragged.py`) or its class (`FusedPrefillBackend`) is the backend it names
_RAGGED = """
class RaggedPrefillBackend:
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major == {admitted}
"""

_FUSED = """
class FusedPrefillBackend:
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major == 10


class FusedBackend:
    @classmethod
    def supports_compute_capability(cls, capability):
        return capability.major >= 8
"""


def _files(admitted: str, second: str = "FLASH") -> dict[str, str]:
    return {
        "eng/select.py": _SELECT.format(second=second),
        "eng/prefill/ragged.py": _RAGGED.format(admitted=admitted),
        "eng/prefill/fused.py": _FUSED,
    }


def test_members_are_read_from_code() -> None:
    assert picked("return [Backends.FAST_MHA, Backends.SLOW, torch.float16, Backends.FAST_MHA]") == (
        "Backends.FAST_MHA",
        "Backends.SLOW",
    )


def test_a_backend_that_refuses_the_target_itself_is_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, _files("10"))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/select.py", 5)]
    assert found[0].extra["evidence"].startswith("the backend's own check at eng/prefill/ragged.py:3")


def test_a_backend_that_admits_the_target_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, _files("12 or capability.major == 10"))
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/select.py", 5)]
    assert "evidence" not in found[0].extra


def test_every_backend_the_target_misses_must_refuse_it(tmp_path: Path) -> None:
    # the class named by the member and the enum's words (prefill) refuses 12.0: still expected
    found = _scan(tmp_path, _files("10", second="FUSED"))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/select.py", 5)]
    # a member naming no class found leaves the loss standing
    found = _scan(tmp_path, _files("10", second="UNKNOWN"))
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/select.py", 5)]
