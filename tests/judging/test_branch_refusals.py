"""branch-refuses-feature: the target has its own arm of an arch decision, and that arm refuses a
feature of the call the arms of other generations take (flash-attn-4's SM120 forward asserts
`page_table is None`, "Paged KV not supported on SM 12.0 in this PR")."""

from __future__ import annotations

import ast
from pathlib import Path

from capgap.judging.refusals import refused

from .test_decisions import _scan

_FORWARD = """
import torch

def _get_device_arch():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor

def flash_attn_fwd(q, k, v, page_table=None, use_block_sparsity=False, _arch=None):
    arch = _get_device_arch() if _arch is None else _arch
    if arch // 10 == 9:
        kernel = ForwardSm90(q, k, v, page_table)
    elif arch // 10 == 10:
        kernel = ForwardSm100(q, k, v, page_table, use_block_sparsity)
    elif arch // 10 == 12:
{own}
        kernel = ForwardSm120(q, k, v)
    else:
        raise ValueError(f"Unsupported compute capability: {{arch}}")
    return kernel()
"""

_PAGED = '        assert page_table is None, "Paged KV not supported on SM 12.0 in this PR"'


def _refusals(tmp_path: Path, own: str, arch: str = "12.0") -> list:
    found = _scan(tmp_path, {"fa/interface.py": _FORWARD.format(own=own)}, arch=arch)
    return [f for f in found if f.rule == "branch-refuses-feature"]


def test_a_feature_the_targets_own_branch_asserts_off_is_a_medium_gap(tmp_path: Path) -> None:
    (found,) = _refusals(tmp_path, _PAGED)
    assert found.severity == "medium"
    assert found.line == 14
    assert found.symbol == "page_table is None"
    assert found.present == ("9.0", "10.0", "10.3")
    assert "'Paged KV not supported on SM 12.0 in this PR'" in found.message
    assert found.message.startswith("12.0's own branch fails calls unless `page_table is None`")
    assert (
        found.extra["instead"] == "fails `page_table is None`: 'Paged KV not supported on SM 12.0 in this PR'"
    )


def test_an_if_raise_refuses_as_an_assert_does_in_one_spelling(tmp_path: Path) -> None:
    own = (
        "        if use_block_sparsity:\n"
        '            raise NotImplementedError("Block sparsity not supported on SM 12.0")'
    )
    (found,) = _refusals(tmp_path, own)
    assert found.symbol == "not use_block_sparsity"
    assert found.message.startswith("12.0's own branch fails calls unless `not use_block_sparsity`")
    assert found.present == ("9.0", "10.0", "10.3")  # no other arm checks it


def test_no_finding_where_every_other_generation_refuses_the_same(tmp_path: Path) -> None:
    source = (
        _FORWARD.format(own=_PAGED)
        .replace(
            "        kernel = ForwardSm90(q, k, v, page_table)",
            '        assert page_table is None, "no paged KV on SM90"\n        kernel = ForwardSm90(q, k, v)',
        )
        .replace(
            "        kernel = ForwardSm100(q, k, v, page_table, use_block_sparsity)",
            "        assert page_table is None\n"
            "        kernel = ForwardSm100(q, k, v, None, use_block_sparsity)",
        )
    )
    found = _scan(tmp_path, {"fa/interface.py": source}, arch="12.0")
    assert [f for f in found if f.rule == "branch-refuses-feature"] == []


def test_a_refusal_in_an_arm_other_generations_share_is_not_the_targets_own(tmp_path: Path) -> None:
    source = _FORWARD.format(own="        pass").replace(
        "    elif arch // 10 == 12:", "    elif arch // 10 in (8, 12):\n" + _PAGED
    )
    found = _scan(tmp_path, {"fa/interface.py": source}, arch="12.0")
    assert [f for f in found if f.rule == "branch-refuses-feature"] == []


def test_a_sibling_target_is_not_judged_by_the_twelve_arm(tmp_path: Path) -> None:
    assert _refusals(tmp_path, _PAGED, arch="10.0") == []


def test_words_naming_what_the_target_lacks_make_it_expected(tmp_path: Path) -> None:
    own = '        assert not use_block_sparsity, "block sparsity needs tcgen05 UMMA, which SM120 lacks"'
    (found,) = _refusals(tmp_path, own)
    assert found.severity == "low"
    assert found.extra["evidence"]


def test_backward_passes_are_low(tmp_path: Path) -> None:
    source = _FORWARD.format(own=_PAGED).replace("def flash_attn_fwd(", "def flash_attn_bwd(")
    found = _scan(tmp_path, {"fa/interface.py": source}, arch="12.0")
    (refusal,) = [f for f in found if f.rule == "branch-refuses-feature"]
    assert refusal.severity == "low"


def _read(code: str) -> tuple[str, ...]:
    return refused(ast.parse(code).body, lambda t: "arch" in ast.unparse(t))


def test_only_checks_of_the_calls_options_are_features() -> None:
    assert _read("assert not (block_sparse_tensors is not None), 'x'") == (
        "1\tblock_sparse_tensors is None\tx",
    )
    assert _read("assert num_splits <= 1 and self.causal is False") == (
        "1\tnum_splits <= 1 and self.causal is False\t",
    )
    # a layout or shape precondition, a test of the arch, `assert False`, the arch's own kernel
    assert _read("assert w.is_contiguous(), 'weights must be contiguous'") == ()
    assert _read("assert q.shape[-1] == 128") == ()
    assert _read("assert arch == 120") == ()
    assert _read("assert False, 'never'") == ()
    assert _read("assert kernel_sm120 is not None, 'SM120 kernel unavailable'") == ()


def test_an_arch_given_by_a_caller_defaults_to_the_devices(tmp_path: Path) -> None:
    """`_get_device_arch() if _level is None else _level`: unless a caller overrides it, the
    device's arch; any other conditional value stays unknown (a name that does not say it is an
    arch), and then no arm is the target's for certain."""
    renamed = _FORWARD.format(own=_PAGED).replace("arch // 10", "level // 10")
    default = renamed.replace(
        "arch = _get_device_arch() if _arch is None else _arch",
        "level = _get_device_arch() if _level is None else _level",
    )
    found = _scan(tmp_path / "default", {"fa/interface.py": default}, arch="12.0")
    assert [f.symbol for f in found if f.rule == "branch-refuses-feature"] == ["page_table is None"]
    other = renamed.replace(
        "arch = _get_device_arch() if _arch is None else _arch",
        "level = _get_device_arch() if q.is_cuda else _level",
    )
    found = _scan(tmp_path / "other", {"fa/interface.py": other}, arch="12.0")
    assert [f for f in found if f.rule == "branch-refuses-feature"] == []


_CONFIG = """
def get_fwd_config(arch: int, num_splits: int, head_dim: int):
    if arch // 10 == 12:
        assert num_splits <= 1, "SM120 forward only supports num_splits=1"
        num_splits = 1
    elif num_splits < 1:
        num_splits = heuristic(head_dim)
    return num_splits
"""


def test_an_arch_number_split_by_ten_is_read_as_its_major(tmp_path: Path) -> None:
    """`arch // 10 == 12` on a parameter named for the arch: only the number form (120) is split
    by ten, so the arm is 12.x's own and its refusal is read."""
    found = _scan(tmp_path, {"fa/config.py": _CONFIG}, arch="12.0")
    (refusal,) = [f for f in found if f.rule == "branch-refuses-feature"]
    assert refusal.symbol == "num_splits <= 1"
    assert refusal.line == 3  # (the fixture's first line is its `def`)


def test_a_feature_only_newer_generations_take_is_no_gap_of_an_older_gpu(tmp_path: Path) -> None:
    """FA4's SM80 arm refuses paged KV, which only the SM90+ arms take: for 8.9 that is a path newer
    kernels outgrew, not a feature a port left behind."""
    source = _FORWARD.format(own="        pass").replace(
        "    if arch // 10 == 9:",
        "    if arch // 10 == 8:\n" + _PAGED + "\n        kernel = Sm80(q)\n    elif arch // 10 == 9:",
    )
    found = _scan(tmp_path, {"fa/interface.py": source}, arch="8.9")
    assert [f for f in found if f.rule == "branch-refuses-feature"] == []
    found = _scan(tmp_path / "new", {"fa/interface.py": _FORWARD.format(own=_PAGED)}, arch="12.0")
    assert [f.symbol for f in found if f.rule == "branch-refuses-feature"] == ["page_table is None"]
