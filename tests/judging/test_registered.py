"""A requirement registered per backend (`@backend_requirement({"cutlass": _req})`) guards the
decorated function's path for that backend, not its own argument checks."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.registered import Registrations
from tests.judging.test_decisions import _brief, _scan

_GEMM = """
from eng.utils import backend_requirement, supported_compute_capability

@supported_compute_capability([100, 103])
def _cutlass_req(a, b, backend="cudnn"):
    if a.dtype != b.dtype:
        raise ValueError("dtypes differ")
    return True

@supported_compute_capability([90, 100, 103])
def _tiled_req(a, b, backend="cudnn"):
    return True

@supported_compute_capability([80, 90, 100, 103, 120])
def _cudnn_req(a, b, backend="cudnn"):
    return True

@backend_requirement({"cudnn": _cudnn_req, "cutlass": _cutlass_req, "tiled": _tiled_req})
def mm(a, b, backend="cudnn"):
    \"\"\"GEMM; the cutlass backend runs tcgen05 kernels.\"\"\"
    if backend == "tiled":
        return mm_tiled_portable(a, b)
    runners = {
        "cudnn": lambda: cudnn_runner(),
        "cutlass": lambda: gemm_sm100_runner(),
    }
    return runners[backend]()(a, b)
"""


def test_a_registered_requirement_is_judged_by_what_its_backend_runs(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/gemm.py": _GEMM})
    # cutlass runs the SM100 runner (its dict entry): expected on 12.0, and it says where it read that
    low = next(f for f in found if "_cutlass_req" in f.message)
    assert low.severity == "low"
    assert low.extra["evidence"] == "'_sm100_runner' (line 24)"
    # the tiled backend returns a portable kernel before the dispatch dict: a real gap
    tiled = next(f for f in found if "_tiled_req" in f.message)
    assert tiled.severity == "medium"
    assert all("_cudnn_req" not in f.message for f in found)
    assert _brief(found) == [
        ("gate-excludes-arch", "low", "eng/gemm.py", 3),
        ("gate-excludes-arch", "medium", "eng/gemm.py", 9),
    ]


def test_registrations_are_read_only_inside_a_decorator() -> None:
    lines = [
        "table = {'cutlass': _cutlass_req}",
        "",
        "@backend_requirement(",
        "    {'cutlass': _cutlass_req},",
        "    common_check=_common,",
        ")",
        "def mm(a, backend='cutlass'):",
        "    if backend == 'other':",
        "        return other(a)",
        "    return run_sm100(a)",
        "",
        "x = 1",
    ]
    reg = Registrations(lines)
    assert reg.guarded("_cutlass_req") == [(10, 10)]  # the other key's arm is left out
    assert reg.guarded("_common") == [(8, 9), (10, 10)]  # a common check guards the whole body
    assert reg.guarded("nothing") == []
