"""Needs the authors state in words: comments beside a table or decision, a module's docstring,
a refusal's message, and a sibling module's statement."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.remarks import stated
from tests.judging.test_decisions import _brief, _scan


def test_negated_mentions_and_tma_multicast_state_no_need() -> None:
    assert stated("# plain CUDA: no tcgen05 or TMEM here")[0] == []
    assert stated("# loads through TMA multicast across the cluster")[0] == []
    needs, where = stated("# the programs use tcgen05 TMEM\n# and NVLS multicast", 40)
    assert needs == [("tcgen05",), ("nvls_multicast",)]
    assert where == ["'tcgen05' (line 40)", "'NVLS' (line 41)"]


def test_tensor_memory_and_two_cta_mma_state_tcgen05_but_tma_does_not() -> None:
    needs, where = stated("keeps the K tiles resident in tensor\nmemory and runs both MMAs", 26)
    assert (needs, where) == ([("tcgen05",)], ["'tensor memory' (line 26)"])
    assert stated("# runs cta_group::2 two-CTA clusters")[0] == [("tcgen05",)]
    assert stated("loads K with the Tensor Memory Accelerator (TMA)")[0] == []
    assert stated("loads K with the Tensor Memory\nAccelerator")[0] == []


_TABLE = """
import torch

{comment}
_FLAGS = {{(10, 0): ["-arch=sm_100a"], (10, 3): ["-arch=sm_103a"]}}


def flags():
    return _FLAGS.get(torch.cuda.get_device_capability(), [])
"""


def test_a_comment_above_a_table_that_states_tcgen05_makes_it_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/jit.py": _TABLE.format(comment="# The programs use tcgen05 TMEM.")})
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit.py", 4)]
    assert found[0].extra["evidence"] == "'tcgen05' (line 3) in the comments beside it"


def test_a_comment_beside_a_module_constant_states_the_module_s_need(tmp_path: Path) -> None:
    # FlashInfer's Cake MLA decode: `CLUSTER_SIZE = 2  # CTAs per cluster (cta_group::2)`
    comment = "CLUSTER_SIZE = 2  # CTAs per cluster (cta_group::2)\nTILE_Q = 128"
    found = _scan(tmp_path, {"eng/jit.py": _TABLE.format(comment=comment)})
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit.py", 5)]
    assert "'cta_group' (line 3) in the module's comments" in found[0].extra["evidence"]


def test_a_comment_that_denies_the_need_leaves_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/jit.py": _TABLE.format(comment="# Plain CUDA, no tcgen05 needed.")})
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit.py", 4)]


def test_a_need_no_keyed_arch_has_explains_nothing(tmp_path: Path) -> None:
    # wgmma is Hopper's: a table keyed 10.0 / 10.3 is not about it
    found = _scan(tmp_path, {"eng/jit.py": _TABLE.format(comment="# Replaces the old wgmma path.")})
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit.py", 4)]


def test_a_module_docstring_stating_the_need_passes_to_a_sibling_that_imports_it(tmp_path: Path) -> None:
    # only modules that read a capability are parsed: the JIT module has its flag table
    jit = (
        '"""JIT registration of the fused MoE programs (tcgen05 UMMA, TMEM accumulators)."""\n\n'
        'ARCH_FLAGS = {"sm_100a": ["-arch=sm_100a"], "sm_103a": ["-arch=sm_103a"]}\n'
    )
    backend = """
    from .jit import build

    _TILES = {"sm_100a": 128, "sm_103a": 256}


    def tile(cc):
        return _TILES.get(cc, 64)
    """
    found = _scan(tmp_path, {"eng/moe/__init__.py": "", "eng/moe/jit.py": jit, "eng/moe/backend.py": backend})
    assert _brief(found) == [
        ("table-missing-arch", "low", "eng/moe/backend.py", 3),
        ("table-missing-arch", "low", "eng/moe/jit.py", 3),
    ]
    assert found[0].extra["evidence"] == "'tcgen05' (line 1) in the module's docstring, via eng.moe.jit"
    assert found[1].extra["evidence"] == "'tcgen05' (line 1) in the module's docstring"


def test_a_refusal_that_says_why_is_an_expected_exclusion(tmp_path: Path) -> None:
    body = """
    import torch

    def plan():
        cap = torch.cuda.get_device_capability()
        if cap not in ((10, 0), (10, 3)):
            raise NotImplementedError("int8 attention needs an SM100 GPU, whose tcgen05 MMA it issues")
        return "sm100"
    """
    found = _scan(tmp_path, {"eng/plan.py": body})
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    assert found[0].extra["evidence"] == "'tcgen05' (line 6) in the refusal"


def test_a_module_under_an_arch_named_directory_is_written_for_that_arch(tmp_path: Path) -> None:
    body = """
    import torch

    def supported():
        if torch.cuda.get_device_capability()[0] != 10:
            return False, "needs a B200 or B300"
        return True, None
    """
    found = _scan(tmp_path, {"eng/third_party/fmha_sm100/check.py": body, "eng/attn/check.py": body})
    assert [(f.path, f.severity) for f in found] == [
        ("eng/attn/check.py", "medium"),
        ("eng/third_party/fmha_sm100/check.py", "low"),
    ]
    assert found[1].extra["evidence"] == "'sm100' in the module's path"


def test_a_trtllm_moe_module_needs_the_sm100_family_and_a_borrowed_name_does_not(tmp_path: Path) -> None:
    body = """
    from eng.platforms import current_platform

    def is_supported_config(quant):
        if not current_platform.is_device_capability_family(100):
            return False, "unsupported GPU"  # (a refusal naming SM100 is evidence of its own)
        return True, None
    """
    found = _scan(
        tmp_path,
        {"eng/experts/trtllm_fp8_moe.py": body, "eng/jit/cake_trtllm_moe_allreduce_union.py": body},
    )
    assert [(f.path, f.severity) for f in found] == [
        ("eng/experts/trtllm_fp8_moe.py", "low"),
        ("eng/jit/cake_trtllm_moe_allreduce_union.py", "medium"),
    ]
