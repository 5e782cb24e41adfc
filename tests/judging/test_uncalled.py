"""A private function that nothing in the tree calls guards no path (torch 2.13's
`torch/utils/_triton.py: has_datacenter_blackwell_tma_device`): its gate finding is low, with
`extra.uncalled`. A public function of a public module, or a decorated one, keeps its severity."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_HELPERS = """
import torch


{decorator}def {name}():
    major, _ = torch.cuda.get_device_capability()
    if major == 10:
        return has_tma() and has_descriptors()
    return False
"""

_CALLER = """
from eng.{module} import {name}


def pick():
    return "blackwell" if {name}() else "generic"
"""


def _found(tmp_path: Path, module: str, name: str, called: bool = False, decorator: str = ""):
    files = {f"eng/{module}.py": _HELPERS.format(name=name, decorator=decorator)}
    if called:
        files["eng/mm.py"] = _CALLER.format(module=module, name=name)
    return [f for f in _scan(tmp_path, files) if f.path.endswith(f"{module}.py")]


def test_a_private_module_function_nothing_calls_is_low(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "_triton", "has_blackwell_tma_device")
    assert found.severity == "low"
    assert found.extra["uncalled"] == "has_blackwell_tma_device"


def test_a_private_function_nothing_calls_is_low(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "triton_utils", "_has_blackwell_tma_device")
    assert found.severity == "low"


def test_one_a_module_imports_keeps_its_severity(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "_triton", "has_blackwell_tma_device", called=True)
    assert found.severity == "medium"


def test_a_public_function_of_a_public_module_keeps_its_severity(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "triton_utils", "has_blackwell_tma_device")
    assert found.severity == "medium"


def test_a_decorated_one_may_be_registered_by_name(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "_nvcc", "_have_tma", decorator='@register_func("nvcc.have_tma")\n')
    assert found.severity == "medium"


def test_a_decorator_call_over_several_lines_may_register_it(tmp_path: Path) -> None:
    # sglang's `@_register_for("NemotronHForCausalLM", ...)` above `def _nemotron_h_overrides(...)`
    decorator = '@_register_for(\n    "NemotronHForCausalLM",\n    "NemotronHPuzzleForCausalLM",\n)\n'
    (found,) = _found(tmp_path, "overrides", "_nemotron_h_overrides", decorator=decorator)
    assert found.severity == "medium"


def test_a_cached_function_nothing_calls_is_still_uncalled(tmp_path: Path) -> None:
    # torch's `@functools.cache` above `def has_datacenter_blackwell_tma_device()`
    (found,) = _found(tmp_path, "_triton", "has_blackwell_tma_device", decorator="@functools.cache\n")
    assert found.severity == "low"


_BUILD_STEP = """
import subprocess


def {name}():
    gencode = " ".join(
        [
            "-gencode=arch=compute_90,code=sm_90",
            "-gencode=arch=compute_100,code=sm_100",
        ]
    )
    subprocess.run(["make", f"NVCC_GENCODE={{gencode}}"], check=True)


def build_wheel(wheel_directory, config_settings=None):
    {call}return "flashinfer.whl"
"""


def test_a_build_list_in_a_private_function_nothing_calls_builds_nothing(tmp_path: Path) -> None:
    """FlashInfer 0.7.4's packaged build_backend.py keeps `_build_nccl_ep()` and its `-gencode`
    list, which no step calls any more: the list builds nothing (low, `extra.uncalled`); once a
    step calls it, it is a build list again (medium)."""
    dead = _scan(tmp_path / "dead", {"pkg/build_backend.py": _BUILD_STEP.format(name="_build_ep", call="")})
    assert [(f.rule, f.severity, f.extra.get("uncalled")) for f in dead] == [
        ("build-missing-arch", "low", "_build_ep")
    ]
    assert "nothing in the tree calls _build_ep(): the arch list in it builds nothing" in dead[0].consequence
    live = _scan(
        tmp_path / "live",
        {"pkg/build_backend.py": _BUILD_STEP.format(name="_build_ep", call="_build_ep()\n    ")},
    )
    assert [(f.rule, f.severity, f.extra["context"]) for f in live] == [
        ("build-missing-arch", "medium", "_build_ep")
    ]
