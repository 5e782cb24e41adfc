"""Which subsystem a finding is about, from its words (not from a list of file names)."""

from __future__ import annotations

from typing import Any

import pytest

from capgap.findings import Finding
from capgap.scan.subsystems import SUBSYSTEMS, subsystem, words


def _f(path: str, symbol: str = "cap", message: str = "cap leaves 12.0 out", rule: str = "gate-excludes-arch",
       **extra: Any) -> Finding:
    return Finding(rule, "medium", path, 3, symbol, ("10.0",), "12.0", "off", message, "12.0", "", extra)


def test_words_split_camel_case_and_punctuation() -> None:
    assert words("SymmMemCommunicator._WORLD_SIZES").split()[0] == "symm_mem_communicator_world_sizes"
    assert words("FusedMoE.py") == "fused_mo_e_py fusedmoe_py"  # the whole word too: MoE is no Mo + E
    assert words("plain_words") == "plain_words"


@pytest.mark.parametrize(
    ("finding", "expected"),
    [
        (_f("eng/distributed/custom_ar.py", "MAX_SIZES"), "communication"),
        (_f("eng/ops/sizes.py", "AllReduceLimits"), "communication"),
        (_f("eng/ops/tables.py", "T", evidence="'multimem' in the table's name"), "communication"),
        (_f("eng/layers/attention/backend.py"), "attention"),
        (_f("eng/kernels/mla_decode.py"), "attention"),
        (_f("eng/ops/gemm/fp16.py", "is_sm100"), "GEMM"),
        (_f("eng/layers/linear.py"), "GEMM"),
        (_f("eng/layers/moe/runner.py"), "MoE"),
        (_f("eng/layers/FusedMoE.py"), "MoE"),
        (_f("eng/layers/quantization/fp8.py"), "quantization"),
        (_f("eng/kernels/w8a8_int8.py"), "quantization"),
        (_f("eng/jit/fmha.py", "ARCH_NVCC_FLAGS", rule="table-missing-arch"), "build"),
        (_f("setup.py", "-gencode", rule="build-missing-arch"), "build"),
        (_f("eng/lib/ops.so", "ops.so", rule="binary-missing-arch"), "build"),
        (_f("eng/lib/libnccl.so", "libnccl.so", rule="binary-missing-arch"), "communication"),
        (_f("eng/sampling/penalties.py"), "other"),
    ],
)
def test_subsystem_from_the_findings_words(finding: Finding, expected: str) -> None:
    assert subsystem(finding) == expected


def test_the_name_of_the_place_outweighs_the_directory() -> None:
    # a MoE file under quantization/ and a quantized kernel under moe/: the file's own name decides
    assert subsystem(_f("eng/layers/quantization/compressed_moe.py")) == "MoE"
    assert subsystem(_f("eng/layers/moe/fp8_quant_kernels.py")) == "quantization"


def test_words_inside_other_words_do_not_count() -> None:
    # `common`, `command`, `property`, `flashinfer` hold comm, rope and flash: none is a subsystem word
    assert subsystem(_f("eng/utils/common.py", "command_property")) == "other"
    assert subsystem(_f("flashinfer/utils.py", "is_sm90a_supported")) == "other"


def test_the_message_and_context_decide_when_the_path_says_nothing() -> None:
    f = _f("eng/hooks.py", "is_sm100", "is_sm100 leaves 12.0 out: 10.0 picks the attention backend 'trtllm'")
    assert subsystem(f) == "attention"
    assert subsystem(_f("eng/hooks.py", context="apply_moe_defaults")) == "MoE"


def test_every_answer_is_one_of_the_subsystems() -> None:
    paths = ["a.py", "x/y/z.py", "", "weird/ü/名前.py", "../..", "a/b/c/d/e/f/g.py"]
    assert {subsystem(_f(p)) for p in paths} <= set(SUBSYSTEMS)
