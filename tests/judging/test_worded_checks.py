"""The engine's check of the very setting and value a path gives (`--gemm-backend=fast_dsl`), whose
test defers to a library's support query and whose words name the archs it requires: what the
engine says the value needs."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_OVERRIDE = """
import torch

def is_sm100():
    return torch.cuda.get_device_capability()[0] == 10

def overrides(cfg):
    out = {}
    if is_sm100() and cfg.gemm_runner_backend == "auto":
        out["gemm_runner_backend"] = "fast_dsl"
        print("Use fast_dsl for dense GEMMs.")
    return out
"""

_CHECK = """
import torch
import gemmlib

def is_blackwell():
    return torch.cuda.get_device_capability()[0] in (10, 12)

def resolve(backend):
    if backend.is_fast_dsl():
        if not (is_blackwell() and gemmlib.is_backend_supported("dsl")):
            raise RuntimeError(
                "GEMM requested via --gemm-backend=fast_dsl, but that kernel {requires}"
            )
        return "fast_dsl"
    return "cuda"
"""


def _severity(tmp_path: Path, requires: str) -> list[tuple[str, str, str, int]]:
    check = _CHECK.replace("{requires}", requires)
    found = _scan(tmp_path, {"eng/overrides.py": _OVERRIDE, "eng/check.py": check})
    return [b for b in _brief(found) if b[2] == "eng/overrides.py"]


def test_a_check_of_the_value_worded_with_the_archs_it_requires(tmp_path: Path) -> None:
    assert _severity(tmp_path, "requires an SM100/SM103 GPU") == [
        ("gate-excludes-arch", "low", "eng/overrides.py", 8)
    ]


def test_a_check_naming_an_arch_and_newer_says_no_need(tmp_path: Path) -> None:
    assert _severity(tmp_path, "requires SM100+ GPUs") == [
        ("gate-excludes-arch", "medium", "eng/overrides.py", 8)
    ]


def test_a_check_of_another_setting_s_flag_is_not_read(tmp_path: Path) -> None:
    found = _severity(tmp_path, "requires an SM100/SM103 GPU").copy()
    other = _scan(
        tmp_path / "b",
        {
            "eng/overrides.py": _OVERRIDE,
            "eng/check.py": _CHECK.replace("--gemm-backend", "--moe-runner").replace(
                "{requires}", "requires an SM100/SM103 GPU"
            ),
        },
    )
    assert found and [b for b in _brief(other) if b[2] == "eng/overrides.py"] == [
        ("gate-excludes-arch", "medium", "eng/overrides.py", 8)
    ]
