"""Sizes set for GPUs with less shared memory than the target (issue 14, "any target arch"): a
branch that shrinks tiles for 12.x's 99 KB is no path a 227 KB GPU was left out of."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.rules.gate_excludes_arch import _sizes_only

from .test_decisions import _brief, _scan

_TILES = """
import torch

def prefill_config(G):
    major, minor = torch.cuda.get_device_capability()
    if major >= 12:
        # SM120's ~100 KB of shared memory cannot hold BN=64 at G=4
        bn, warps, stages = (64, 4, 3) if G == 2 else (32, 4, 2)
    else:
        bn, warps, stages = (64, 8, 3)
    return bn, warps, stages

def use_fast(G):
    major, minor = torch.cuda.get_device_capability()
    if major >= 12:
        return fused_small_kernel(G)
    return unfused(G)
"""


def test_sizes_for_smaller_gpus_leave_out_no_larger_one(tmp_path: Path) -> None:
    on_thor = _scan(tmp_path / "thor", {"eng/tiles.py": _TILES}, arch="11.0")
    # the tile branch shrinks the kernel for 12.x: Thor keeps the larger default; a kernel only
    # 12.x gets is still judged
    assert [(f.line, f.severity) for f in on_thor] == [(14, "medium")]
    # on 12.1 (a GPU as small as 12.0) the branch is its own generation's, and 8.9 has as little
    # shared memory as 12.x: the sizes are no shrink for GPUs smaller than it, judged as before
    on_ada = _scan(tmp_path / "ada", {"eng/tiles.py": _TILES}, arch="8.9")
    assert 5 in [f.line for f in on_ada]
    assert _brief(on_thor)[0][0] == "gate-excludes-arch"


def test_only_numbers_read_as_sizes() -> None:
    assert _sizes_only("sets bn, warps, stages = (64, 4, 3) if G == 2 else (32, 4, 2)")
    assert _sizes_only("if Lq <= 128: BLOCK_M, BLOCK_N = (64, 128) elif Lq <= 256: BLOCK_M...")
    assert _sizes_only("carries on (returns 16)")
    assert not _sizes_only("calls _select_sm120_config()")
    assert not _sizes_only("gives 'auto'")
    assert not _sizes_only("sets x = tile_for(3)")
    assert not _sizes_only("sets use_fast = True")
    # digits in a name are no size: `weight.shape[1]`, a kernel named for sm120, `fp32_state`
    assert not _sizes_only("carries on (sets n = weight.shape[1])")
    assert not _sizes_only("sets fn = fp8_paged_mqa_logits_torch_sm120")
    assert not _sizes_only("sets self._prefill_needs_fp32_state = True")
    assert _sizes_only("gives _SM120_INDEXER_M_CHUNK")  # a constant's name: a size set apart
    # FlashInfer 0.7.4's cuTile FP8 tile shortlist: the shared tiles spread beside sizes of its own
    assert _sizes_only("returns (*common[1:], (256, 128, 1), (256, 256, 1))")
    assert not _sizes_only("returns (*common,)")  # a spread alone sizes nothing of its own
    assert not _sizes_only("returns (*make_tiles(), (256, 128, 1))")


def test_tiles_each_arch_sizes_its_own_way_in_a_nested_branch_are_tuning(tmp_path: Path) -> None:
    """sglang's extend attention at 11.0: 10.x takes `if Lq <= 256: BLOCK_M, BLOCK_N = (64, 64)
    else: ...`, the target `BLOCK_M, BLOCK_N = (64, 64) if Lq <= 128 else (32, 32)`: only tile
    sizes differ (low, tuning)."""
    text = """
    import torch

    CUDA_CAPABILITY = torch.cuda.get_device_capability()


    def tiles(Lq):
        if CUDA_CAPABILITY[0] == 10:
            if Lq <= 256:
                BLOCK_M, BLOCK_N = (64, 64)
            else:
                BLOCK_M, BLOCK_N = (32, 64)
        else:
            BLOCK_M, BLOCK_N = (64, 64) if Lq <= 128 else (32, 32)
        return launch(BLOCK_M, BLOCK_N)
    """
    found = _scan(tmp_path, {"eng/extend.py": text}, arch="11.0")
    found = [f for f in found if f.rule == "gate-excludes-arch"]
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]
