"""A gate whose path also asks a value the tree's own resolver never gives the target (vLLM's
`fa_version == 4` past `is_device_capability_family(100)`, where `get_flash_attn_version()`
asserts a support check that refuses FA4 on 12.x): the target is decided in the resolver, and
the gate's finding is low, naming it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

# the support check: FA4 on 9.x and 10.x only, answered as (ok, reason)
_INTERFACE = """
from eng.platforms import current_platform


def _fa4_ok():
    if not FA4_AVAILABLE:
        return False, "FA4 is unavailable"
    if not any(current_platform.is_device_capability_family(f) for f in FAMILIES):
        return False, "FA4 needs 9.x or 10.x"
    return True, None


def is_version_supported(version):
    if version == 2:
        return True
    elif version == 4:
        return _fa4_ok()[0]
    else:
        raise ValueError(f"unknown version {version}")
"""

# the resolver: a default per arch, a configured override, then the support check
_UTILS = """
from eng.platforms import current_platform


def pick_version(head_size=None):
    try:
        from eng.interface import is_version_supported as _supported

        cap = current_platform.get_device_capability()
        if cap.major == 10 and _supported(4):
            version = 4
        else:
            version = 2
        configured = read_config()
        if configured is not None:
            version = configured
        for _ in range(3):
            head_size = head_size or 64
        CHECK
        return version
    except (ImportError, AssertionError):
        return None


def is_version_supported(version):
    from eng.interface import is_version_supported as _supported

    return _supported(version)
"""

_LAYER = """
from eng.platforms import current_platform
from eng.utils import pick_version


def masked_prefill_available(quantized):
    if not current_platform.is_device_capability_family(100):
        return False
    version = pick_version(head_size=128)
    return version == 4 and not quantized


def layout(tiles):
    # a list compared whole: no value a resolver picks
    if tiles == [1, 2] and current_platform.get_device_capability()[0] == 10:
        return "fast"
    return "slow"


class Prefill:
    def __init__(self):
        self.attn_version = pick_version()

    def supports_fused_output(self, key):
        cap = current_platform.get_device_capability()
        return self.attn_version == 4 and cap is not None and cap[0] == 10 and key == "fp8"
"""


def _scan(tmp_path: Path, check: str, families: str = "(90, 100)") -> list[Finding]:
    texts = {
        "eng/__init__.py": "",
        "eng/platforms.py": "current_platform = object()\n",
        "eng/interface.py": _INTERFACE.replace("FAMILIES", families),
        "eng/utils.py": _UTILS.replace("CHECK", check),
        "eng/layer.py": _LAYER,
    }
    for rel, text in texts.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, binaries=False)
    return [f for f in run_scan([str(tmp_path)], options).findings if f.path == "eng/layer.py"]


def test_a_value_the_resolver_never_gives_the_target_decides_first(tmp_path: Path) -> None:
    found = _scan(tmp_path, "assert is_version_supported(version)")
    assert {(f.line, f.severity) for f in found} == {(6, "low"), (25, "low"), (14, "medium")}
    guard = next(f for f in found if f.line == 6)
    assert guard.extra["decided_first"] == (
        "'version == 4' never holds there: pick_version() (eng/utils.py:4) gives 12.0 2, None only; "
        "the target is decided there"
    )
    assert guard.consequence.endswith("; 12.0 never takes this path: " + guard.extra["decided_first"])
    method = next(f for f in found if f.line == 25)
    assert "'self.attn_version == 4' never holds there" in method.extra["decided_first"]


def test_a_refusal_that_only_logs_narrows_nothing(tmp_path: Path) -> None:
    # the override may be 4 and nothing turns it away: the path may be open to 12.0
    found = _scan(tmp_path, "if not is_version_supported(version):\n            print('unsupported')")
    assert {f.severity for f in found} == {"medium"}
    assert not any("decided_first" in f.extra for f in found)
    assert len(found) == 3


def test_a_refusal_that_raises_narrows_as_an_assert_does(tmp_path: Path) -> None:
    found = _scan(
        tmp_path, "if not is_version_supported(version):\n            raise AssertionError(version)"
    )
    assert {f.severity for f in found if f.line != 14} == {"low"}


def test_a_target_the_support_check_accepts_keeps_its_finding(tmp_path: Path) -> None:
    # 12.x may be configured to FA4 and the check accepts it: the family test is what shuts it out
    found = _scan(tmp_path, "assert is_version_supported(version)", families="(90, 100, 120)")
    assert found and {f.severity for f in found} == {"medium"}
