"""gate-admits-unsupported: a module the admitted path imports, named for an arch
(`from flash_attn.cute.flash_fwd_sm100_fp4 import FlashAttentionForwardSm100`), is direct
evidence of what the path runs; the same arch named in a flag or a setting is not. xfuser 0.7.0's
`_check_flash_attn_4_fp4` refuses only `major < 10`, then imports FA4's SM100 FP4 forward."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_CHECK = """
import torch


def has_fp4_attention():
    major, _ = torch.cuda.get_device_capability()
    if major < 10:
        return False
    {line}
    return True
"""


def _found(tmp_path: Path, line: str, path: str = "eng/envs.py") -> list:
    return [
        f for f in _scan(tmp_path, {path: _CHECK.format(line=line)}) if f.rule == "gate-admits-unsupported"
    ]


def test_an_imported_module_named_for_sm100_is_what_the_path_runs(tmp_path: Path) -> None:
    line = "from flash_attn.cute.flash_fwd_sm100_fp4 import FlashAttentionForward  # noqa: F401"
    (found,) = _found(tmp_path, line)
    assert (found.severity, found.line, found.extra["needs"]) == ("medium", 6, ["tcgen05"])
    assert "the module flash_attn.cute.flash_fwd_sm100_fp4, which it imports (line 8)" in found.consequence


def test_an_arch_named_in_a_flag_is_no_path(tmp_path: Path) -> None:
    assert _brief(_found(tmp_path, "use_sm100_fp4 = True")) == []


def test_a_backward_pass_admitting_the_target_is_low(tmp_path: Path) -> None:
    line = "from kernels.indexer_backward_sm100 import IndexerBackward  # noqa: F401"
    (found,) = _found(tmp_path, line, path="eng/indexer_backward/api.py")
    assert (found.severity, found.extra["where"]) == ("low", "backward")
