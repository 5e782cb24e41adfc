"""Decisions read whole, from engines judged on 2026-12-03 (liger-kernel, Transformer Engine,
unsloth): each test's tree is written here, shaped as the code judged was.

- A conditional expression that is an outcome of another (`A if cc > 100 else (B if cc == 100
  else C)`) is one decision with it, not a second one that forgets the outer test.
- A limit the target's test names it for (`cap in ((8, 9), (12, 0))`: off), every other GPU
  skipping it, is the authors' known issue: low. (Where others get a path instead, it stays a loss.)
- `cap != (12, 0)` names the one GPU it leaves out: a deliberate exclusion, low.
- A table of the versions an arch requires beyond a default (`_SM_MIN_TOOLKIT`) loses nothing
  where it lacks the arch.
- `TORCH_CUDA_ARCH_LIST` named in a comment, or in a docstring's usage example, is no build list.
- gate-admits-unsupported: a comment naming a kernel family (`FA3`) is no evidence of the
  instructions a path uses (one naming them, `uses tcgen05`, still is).
- cuTile kernels (`@ct.kernel`) are a module's own kernel code: a refusal naming Hopper beside them
  is no evidence of wgmma (liger-kernel's cuTile FLCE).
- A quantity each arch computes its own way (`return stages * (a + b) + 64` beside `return need`)
  is tuning, low.
"""

from __future__ import annotations

from pathlib import Path

from capgap.judging.rules.gate_admits_unsupported import _direct
from tests.judging.test_decisions import _brief, _scan

_NESTED = """
import torch

_B300 = 16
_B200 = 8


def forward(x):
    major, minor = torch.cuda.get_device_capability()
    _cc = major * 10 + minor
    chunk_mem_const = _B300 if _cc > 100 else (_B200 if _cc == 100 else 1)
    return chunk_mem_const
"""

_NAMED = """
import torch


def select(inference_params, use_fused_attention, use_flash_attention):
    cap = torch.cuda.get_device_capability()
    if inference_params is not None:
        # Temporarily disabling fused attention for kv caching on sm89/sm120 (a cuDNN bug)
        if cap in ((8, 9), (12, 0)):
            print("Disabling FusedAttention for KV caching for sm89/sm120")
            use_fused_attention = False
    return use_fused_attention, use_flash_attention
"""

_UNEQUAL = """
import torch


def stats_layout(qkv_format):
    packed = False
    if qkv_format == "thd":
        packed = torch.cuda.get_device_capability() != (12, 0)
    return packed
"""

_REQUIRED = """
import torch

_MIN_TOOLKIT = (12, 8)
_SM_MIN_TOOLKIT = {103: (12, 9), 121: (12, 9)}


def toolkit_for_host():
    major, minor = torch.cuda.get_device_capability()
    sm = major * 10 + minor
    return max(_MIN_TOOLKIT, _SM_MIN_TOOLKIT.get(sm, _MIN_TOOLKIT))
"""

_COMMENTED_LIST = """
def fa3_lacks_sm90a(build_env):
    # FA3 is compiled for TORCH_CUDA_ARCH_LIST verbatim; without "9.0a" its wgmma kernels trap.
    arch_list = str(build_env.get("TORCH_CUDA_ARCH_LIST") or "")
    return bool(arch_list) and "9.0a" not in arch_list
"""

_DOCUMENTED_LIST = '''
import os


def load(name, sources):
    """Build a CUDA extension.

    Pick the archs with TORCH_CUDA_ARCH_LIST:

    ``TORCH_CUDA_ARCH_LIST="6.1 8.6" python build_my_extension.py``
    """
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "{default}")
    return _build(name, sources)
'''

_ESTIMATE = """
import torch


def estimate_smem(a, b, stages, dw):
    hopper_like = torch.cuda.get_device_capability()[0] in (9, 10, 11)
    if dw:
        need = stages * (a + b)
        return need
    if hopper_like:
        return stages * (a + b) + 64
    return max(stages - 1, 1) * (a + b)
"""


def test_a_conditional_expression_inside_another_is_judged_with_it(tmp_path: Path) -> None:
    # 12.0 gives 120 > 100: the B300 budget, as 10.3 does; 10.0 has its own
    assert _scan(tmp_path, {"eng/jsd.py": _NESTED}) == []
    assert _scan(tmp_path, {"eng/jsd.py": _NESTED}, arch="10.0") == []


def test_a_limit_put_on_the_target_by_name_is_no_path_others_get(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/select.py": _NAMED})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/select.py", 8)]
    assert found[0].extra["evidence"] == "the test 'if cap in ((8, 9), (12, 0)):' names 12.0"


def test_a_test_leaving_out_the_one_gpu_it_names_is_deliberate(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/layout.py": _UNEQUAL})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/layout.py", 7)]
    assert "names 12.0's family to shut it out" in found[0].consequence


def test_a_table_of_required_versions_lacking_the_arch_asks_no_more(tmp_path: Path) -> None:
    assert [f for f in _scan(tmp_path, {"eng/toolkit.py": _REQUIRED}) if f.rule == "table-missing-arch"] == []


def test_an_arch_list_named_in_a_comment_is_no_build_list(tmp_path: Path) -> None:
    assert _scan(tmp_path, {"eng/xf.py": _COMMENTED_LIST}) == []


def test_a_build_list_in_a_docstring_is_documentation(tmp_path: Path) -> None:
    # torch/utils/cpp_extension.py's docstring (two medium build-missing-arch findings in torch 2.13)
    code = _DOCUMENTED_LIST.format(default="")
    assert _scan(tmp_path, {"eng/ext.py": code}) == []


def test_a_build_list_the_code_sets_beside_such_a_docstring_still_counts(tmp_path: Path) -> None:
    code = _DOCUMENTED_LIST.format(default="8.0 9.0")
    found = _scan(tmp_path, {"eng/ext.py": code})
    assert [(f.rule, f.line) for f in found] == [("build-missing-arch", 11)]


def test_a_comment_naming_a_kernel_family_is_no_evidence_of_instructions() -> None:
    # (what unsloth's attention_dispatch.py:608 was read from, and sglang's gdn_cutedsl.py:44)
    assert not _direct("'FA3' (line 608) in a comment")
    assert _direct("'tcgen05' (line 44) in a comment")
    assert _direct("'fa3' (line 12)")  # in code, the family's name is the path taken


def test_a_quantity_each_arch_computes_its_own_way_is_tuning(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/smem.py": _ESTIMATE})
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    assert "tuning only" in found[0].consequence


_CUTILE = """
import cuda.tile as ct
import torch


@ct.kernel(occupancy=8)
def flce_kernel(x, out):
    ct.store(out, ct.load(x))


def validate(x):
    if torch.cuda.get_device_capability(x.device) != (9, 0):
        raise RuntimeError("cuTile FLCE requires a Hopper (compute capability 9.0) GPU")
"""


def test_cutile_kernels_are_the_module_s_own_code(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/flce.py": _CUTILE})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/flce.py", 11)]
    assert found[0].extra["evidence"] == "its own @ct.kernel code (line 5)"


_INNER_GATE = """
import torch


def backend(fast):
    is_sm100 = torch.cuda.get_device_capability()[0] == 10
    name = ("cute_dsl" if is_sm100 else "cuda") if fast else "torch"
    return name
"""


def test_an_arch_test_inside_a_branch_value_of_another_test_is_still_read(tmp_path: Path) -> None:
    # the outer test (`fast`) asks no arch: the inner expression is the decision
    found = _scan(tmp_path, {"eng/pick.py": _INNER_GATE})
    assert [(f.rule, f.line) for f in found] == [("gate-excludes-arch", 6)]
