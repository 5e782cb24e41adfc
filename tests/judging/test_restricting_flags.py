"""A flag most of whose branches raise marks a configuration the engine restricts: its other
branches, which only fit settings to that, are restrictions too (an expected gap, low)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_HOOK = """
import torch

def is_sm100():
    return torch.cuda.get_device_capability() == (10, 0)

def check(cfg):
    sm100_native = cfg.kv_dtype == "nvfp4" and is_sm100() and cfg.backend == "gen"
    if sm100_native and cfg.spec == "tree":
        raise ValueError("native layout does not support tree drafts")
    if sm100_native and cfg.disagg:
        raise ValueError("native layout does not support disaggregation")
    if sm100_native and cfg.host_cache:
        raise ValueError("native layout does not support the host cache")
    sm100_mixed = sm100_native and cfg.prefill == "fi"
    if sm100_native and cfg.spec is not None:
        if cfg.draft is None:
            cfg.draft = "gen"
        elif cfg.draft != "gen":
            raise ValueError("the draft must use the native layout")
    if sm100_mixed and cfg.mode == "prefill":
        cfg.mode = "decode"
"""


def test_branches_of_a_flag_of_refusals_are_restrictions(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/hook.py": _HOOK})
    rows = [(f.line, f.severity) for f in found if f.rule == "gate-excludes-arch"]
    assert (15, "low") in rows and (20, "low") in rows
    assert all(sev == "low" for _, sev in rows), _brief(found)


def test_a_flag_with_few_refusals_keeps_its_path(tmp_path: Path) -> None:
    # two argument checks beside the path itself: the flag picks a path, it restricts nothing
    hook = """
import torch

def is_sm100():
    return torch.cuda.get_device_capability() == (10, 0)

def pick(cfg, out):
    sm100_fast = is_sm100() and cfg.kv_dtype == "fp8"
    if sm100_fast and cfg.head_dim not in (64, 128):
        raise ValueError("head_dim must be 64 or 128")
    if sm100_fast and cfg.window:
        raise ValueError("no sliding window")
    if sm100_fast:
        out["backend"] = "gen_fast"
    return out
"""
    found = _scan(tmp_path, {"eng/hook.py": hook})
    rows = [(f.line, f.severity) for f in found if f.rule == "gate-excludes-arch"]
    assert (12, "medium") in rows, _brief(found)
