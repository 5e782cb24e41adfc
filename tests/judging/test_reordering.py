"""A preference order only Hopper takes, written as the rest of a block after a guard clause, is
Hopper's tuning: datacenter Blackwell keeps the target's order too, so a low tuning finding at most."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_GUARDED_REORDER = """
import torch


def prefers_fast(capability=None):
    if capability is None:
        major, minor = torch.cuda.get_device_capability()
        capability = major * 10 + minor
    return capability in (90,)


def prioritize(kernels, capability=None):
    if not prefers_fast(capability):
        return kernels
    first = next(k for k in kernels if k.fast)
    out = kernels.copy()
    out.insert(0, first)
    return out
"""


def test_a_reorder_after_a_guard_clause_is_hopper_tuning(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/priority.py": _GUARDED_REORDER})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]


def test_a_path_after_the_guard_clause_is_still_judged(tmp_path: Path) -> None:
    text = _GUARDED_REORDER.replace(
        "first = next(k for k in kernels if k.fast)", "first = load_fast_kernel()"
    )
    text = text.replace("(90,)", "(90, 100, 103)")
    assert [f.severity for f in _scan(tmp_path, {"eng/priority.py": text})] == ["medium"]


def test_a_hopper_only_number_behind_a_package_probe_is_tuning(tmp_path: Path) -> None:
    # `try: import cutlass.cute; return 4 except ImportError: pass`: the import only probes
    found = _scan(
        tmp_path,
        {
            "eng/splits.py": """
        import torch

        def kv_splits(q):
            arch = tuple(torch.cuda.get_device_capability(q.device))
            if arch == (9, 0) and q.shape[1] >= 65536:
                try:
                    import cutlass.cute  # noqa: F401

                    return 4
                except ImportError:
                    pass
            return 1
    """
        },
    )
    assert [(f.severity, f.line) for f in found] == [("low", 5)]
    assert "returns 4" in found[0].message


_CLUSTER = """
import torch


def cluster_tuning():
    major = torch.cuda.get_device_capability()[0]
    return (8, 128 * 1024) if major == 9 else (16, 512 * 1024)
"""


def test_a_tuple_of_numbers_only_hopper_gets_is_tuning(tmp_path: Path) -> None:
    # sglang's deep_select `_cluster_tuning`: 10.x takes the target's (16, 512K) too
    found = _scan(tmp_path, {"eng/select.py": _CLUSTER})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]


def test_numbers_for_old_archs_and_an_error_for_the_rest_is_no_tuning(tmp_path: Path) -> None:
    # sglang's pdmux `get_arch_constraints`: 6.x to 9.x answer, everything newer raises
    text = """
import torch


def arch_constraints():
    major, minor = torch.cuda.get_device_capability()
    if major == 8:
        return 4, 2
    elif major == 9:
        return 8, 8
    else:
        raise ValueError("Unsupported compute capability")
"""
    found = _scan(tmp_path, {"eng/split.py": text})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("medium", None)]


_THOR = """
import torch

_MOE_SM110_MAX_TOKENS = 32
_MOE_DEFAULT_MAX_TOKENS = 128


def configure(layer):
    major, _ = torch.cuda.get_device_capability()
    is_sm110 = major == 11
    layer.max_tokens_per_expert = (
        _MOE_SM110_MAX_TOKENS if is_sm110 else _MOE_DEFAULT_MAX_TOKENS
    )
    return layer
"""


def test_sizes_only_thor_gets_are_its_special_case(tmp_path: Path) -> None:
    """aphrodite's EXL3 MoE tile cap for Thor (`is_sm110`): 12.0 gets the default every 10.x GPU
    gets too, so it is Thor's special case: low tuning. Not for a target of Thor's own generation,
    nor when a 10.x GPU shares the sizes (then the target is left out of what datacenter Blackwell
    has)."""
    found = _scan(tmp_path / "thor", {"eng/exl3.py": _THOR})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]
    assert "only 11.0 get it, every 10.x GPU goes without it as 12.0 does" in found[0].consequence
    with_b200 = _THOR.replace("major == 11", "major in (10, 11)")
    found = _scan(tmp_path / "b200", {"eng/exl3.py": with_b200})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("medium", None)]
