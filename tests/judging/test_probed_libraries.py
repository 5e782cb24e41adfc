"""A kernel library whose upstream releases build for wgmma / tcgen05 archs only (DeepGEMM,
FlashMLA): its name admits the target into what it cannot run only where the decision probes for
the package itself behind a test written for a generation and newer, and the tree holds no port of
it to the target."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PROBE = """
import functools

import torch


@functools.lru_cache
def _has_deep_gemm() -> bool:
    try:
        import deep_gemm  # noqa: F401
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9
"""


def test_a_probe_of_the_package_behind_an_open_range_admits_the_target(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fp8_linear.py": _PROBE})
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/fp8_linear.py", 12)]
    assert "imported by _has_deep_gemm()" in found[0].consequence


def test_a_probe_that_names_the_archs_it_admits_is_no_finding(tmp_path: Path) -> None:
    named = _PROBE.replace("[0] >= 9", "[0] in (9, 10, 12)")
    assert _scan(tmp_path, {"eng/fp8_linear.py": named}) == []


def test_a_port_of_the_library_to_the_target_in_the_tree_is_no_finding(tmp_path: Path) -> None:
    port = "import torch\n\ndef is_supported():\n    return torch.cuda.get_device_capability() == (12, 0)\n"
    found = _scan(tmp_path, {"eng/fp8_linear.py": _PROBE, "eng/moe/deep_gemm_sm120.py": port})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []


def test_the_library_named_in_passing_is_no_finding(tmp_path: Path) -> None:
    passing = """
import torch


def enable_pdl(set_pdl) -> bool:
    if set_pdl is None or torch.cuda.get_device_capability()[0] < 9:
        return False
    set_pdl(True)
    print("enabled DeepGEMM PDL")
    return True
"""
    assert _scan(tmp_path, {"eng/pdl.py": passing}) == []


def test_an_import_of_the_package_in_the_arm_admits_the_target(tmp_path: Path) -> None:
    arm = """
import torch


def use_flash_mla():
    use = False
    try:
        major, _ = torch.cuda.get_device_capability()
        if major >= 9:
            import flash_mla  # noqa: F401
            use = True
    except ImportError:
        pass
    return use
"""
    found = _scan(tmp_path, {"eng/mla.py": arm})
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/mla.py", 8)]


def test_a_probe_behind_the_device_properties_major_is_read(tmp_path: Path) -> None:
    props = """
import torch


def flash_mla_available():
    use = False
    try:
        props = torch.cuda.get_device_properties(0)
        major = getattr(props, "major", None)
        if isinstance(major, int) and major >= 9:
            import flash_mla  # noqa: F401
            use = True
    except ImportError:
        pass
    return use
"""
    # no capability word in the module: its `getattr(props, "major")` makes it worth reading
    found = _scan(tmp_path, {"eng/mla_utils.py": props})
    assert _brief(found) == [("gate-admits-unsupported", "medium", "eng/mla_utils.py", 9)]
