"""A module that turns the target away where it reads the GPU (judging.refusedfirst): cuDNN
frontend 1.32's flex attention reads the GPU only through `get_device_arch()`, which raises
NotImplementedError outside (90, 100, 103); the dispatches that test the number it returned are
never reached on 12.0 (judged not-a-gap, an engine no rule was written against)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_GETTER = """
import torch

SUPPORTED_ARCHES = (90, 100, 103)


def get_device_arch(device_index=None):
    major, minor = torch.cuda.get_device_capability(device_index)
    arch = major * 10 + minor
    if arch not in SUPPORTED_ARCHES:
        raise NotImplementedError(f"flex attention supports SM90, SM100 and SM103; got SM{arch}")
    return arch
"""

_DISPATCH = """
{imports}


def resolve_config(head_dim):
    arch = {getter}()
    use_hd256 = head_dim == 256 and arch in (100, 103)
    return make_config(arch, use_hd256)


def plan_family(arch: int):
    return "sm90" if arch == 90 else blackwell_family(arch)
"""


def _dispatch(tmp_path: Path, imports: str, getter: str) -> list[tuple[int, str, str]]:
    files = {
        "pkg/flex/runtime/arch.py": _GETTER,
        "pkg/flex/dispatch.py": _DISPATCH.format(imports=imports, getter=getter),
    }
    found = [f for f in _scan(tmp_path, files) if f.path == "pkg/flex/dispatch.py"]
    return [(f.line, f.severity, f.extra.get("evidence", "")) for f in found]


def test_a_dispatch_on_the_arch_a_refusing_getter_returned_is_never_reached(tmp_path: Path) -> None:
    found = _dispatch(tmp_path, "from pkg.flex.runtime.arch import get_device_arch", "get_device_arch")
    # (the flag beside the getter's call is not reported: the call raises there, judged before)
    assert [(line, severity) for line, severity, _ in found] == [(11, "low")]
    assert all("pkg.flex.runtime.arch.get_device_arch() raises NotImplementedError" in e for _, _, e in found)


def test_the_getter_s_own_refusal_is_still_reported(tmp_path: Path) -> None:
    files = {"pkg/flex/runtime/arch.py": _GETTER}
    (found,) = _scan(tmp_path, files)
    # reported, as expected: SM90 and SM100/SM103 each have an MMA generation 12.0 lacks (cuDNN's
    # flex attention ships kernels/sm90 and kernels/sm100 only, judged expected)
    assert found.severity == "low"
    assert "raises NotImplementedError" in found.message


def test_a_module_that_neither_imports_nor_calls_the_getter_is_judged_as_before(tmp_path: Path) -> None:
    imports = (
        "import torch\n\n\ndef own_arch():\n"
        "    major, minor = torch.cuda.get_device_capability()\n    return major * 10 + minor"
    )
    found = _dispatch(tmp_path, imports, "own_arch")
    assert [(line, severity) for line, severity, _ in found] == [(11, "medium"), (16, "medium")]
