"""A comment that says how much shared memory a launch value needs, read against the target's per-block
limit (judging.sizesaid, rules.gate_admits_unsupported)."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import sizesaid

from .test_decisions import _brief, _scan


def test_a_stated_size_is_read_with_its_setting_and_value() -> None:
    (said,) = sizesaid.stated("# BLOCK_T=128 needs 122,880 bytes of shared memory and is not safe here.")
    assert (said.name, said.value, said.nbytes) == ("BLOCK_T", 128, 122_880)
    (said,) = sizesaid.stated("# sm_121 caps shared memory at 99 KB per block and num_stages=4 needs 108 KB.")
    assert (said.name, said.value, said.nbytes) == ("num_stages", 4, 108 * 1024)
    # no shared-memory word in the sentence: an alignment, not a launch size
    assert sizesaid.stated("# fp8_ds_mla is a paged layout and needs 576B alignment. Plain smem copy.") == ()
    assert sizesaid.gives("returns (128, 64, 32, 2, 8)", 128)
    assert not sizesaid.gives("returns (64, 64, 32, 2, 4)", 128)
    assert not sizesaid.gives("gives 1280", 128)


_STAGES = """
import torch


def is_sm121():
    return torch.cuda.get_device_capability() == (12, 1)


def config():
    return {
        "BLOCK_SIZE_M": 16,
        # sm_121 (GB10) caps shared memory at 99 KB per block and
        # num_stages=4 needs 108 KB.
        "num_stages": 3 if is_sm121() else 4,
    }
"""

_TILES = """
import torch


def select_block_config():
    major = torch.cuda.get_device_capability()[0]
    if major >= 10:
        return (128, 64, 32, 2, 8)
    # BLOCK_T=128 needs 122,880 bytes of shared memory: capped before Blackwell.
    return (64, 64, 32, 2, 4)
"""


def test_a_value_said_to_overflow_the_target_s_shared_memory_is_a_crash(tmp_path: Path) -> None:
    """sglang's Inkling MoE sizes its stages down for the 99 KB GB10 only, and its comment says 4
    stages need 108 KB: a 12.0 block has 99 KB too. vllm-omni's MAGI-2 head MoE gives every major
    >= 10 BLOCK_T=128, which its comment says needs 122,880 bytes."""
    stages = _scan(tmp_path / "stages", {"eng/moe.py": _STAGES})
    assert [(f.rule, f.severity, f.line) for f in stages] == [("gate-admits-unsupported", "high", 13)]
    assert "num_stages=4 needs 110,592 bytes of shared memory per block" in stages[0].message
    assert "OutOfResources" in stages[0].consequence
    tiles = _scan(tmp_path / "tiles", {"eng/mh.py": _TILES})
    assert _brief(tiles) == [("gate-admits-unsupported", "high", "eng/mh.py", 6)]
    assert "a block on 12.0 gets 101,376" in tiles[0].consequence


def test_where_the_target_s_blocks_have_the_room_nothing_is_said(tmp_path: Path) -> None:
    assert _scan(tmp_path / "b200", {"eng/moe.py": _STAGES}, arch="10.0") == []
    # the GB10 the authors sized down for gets its own outcome
    assert _scan(tmp_path / "spark", {"eng/moe.py": _STAGES}, arch="12.1") == []
