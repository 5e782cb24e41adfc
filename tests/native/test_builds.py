"""build-missing-arch for JIT flag builders (`supported_major_versions=[9, 10]`), judged with what
the module's native sources need."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.cli_runner import run_cli

JIT = """\
from . import env as jit_env
from .core import gen_jit_spec, get_nvcc_flags_list


def gen_{name}_module():  # kernels for Hopper (sm_90) and newer
    nvcc_flags = get_nvcc_flags_list(supported_major_versions={majors})
    return gen_jit_spec(
        "{name}",
        [jit_env.CSRC_DIR / "{name}_kernel.cu"],
        extra_cuda_cflags=nvcc_flags,
    )
"""


def _scan(tmp_path: Path, files: dict[str, str]) -> list[dict]:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    result = run_cli("scan", str(tmp_path), "--arch", "12.0", "-f", "json", "--no-binaries", "--no-cache")
    return [f for f in json.loads(result.out)["findings"] if f["rule"] == "build-missing-arch"]


def test_jit_majors_without_the_target(tmp_path: Path) -> None:
    got = _scan(
        tmp_path,
        {
            "pkg/jit/umma.py": JIT.format(name="umma_gemm", majors="[10]"),
            "pkg/jit/portable.py": JIT.format(name="allreduce", majors="[9, 10]"),
            "pkg/jit/ours.py": JIT.format(name="norm", majors="[9, 10, 12]"),
            "pkg/csrc/umma_gemm_kernel.cu": '__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n',
            "pkg/csrc/allreduce_kernel.cu": "__global__ void k(float* x) { x[0] += 1.f; }\n",
            "pkg/csrc/norm_kernel.cu": "__global__ void k(float* x) { x[0] = 0.f; }\n",
        },
    )
    by_path = {f["path"]: f for f in got}
    assert set(by_path) == {"pkg/jit/umma.py", "pkg/jit/portable.py"}
    umma, portable = by_path["pkg/jit/umma.py"], by_path["pkg/jit/portable.py"]
    assert umma["severity"] == "low" and "tcgen05" in umma["consequence"] and umma["line"] == 6
    assert portable["severity"] == "medium" and portable["present"] == ["9", "10"]
    assert portable["missing"] == "12"
    assert "No supported CUDA architectures" in portable["consequence"]


def test_per_arch_variants_of_one_module(tmp_path: Path) -> None:
    two = JIT.format(name="ssu", majors="[9]").replace("gen_ssu_module", "gen_ssu_sm90_module")
    two += JIT.format(name="ssu", majors="[10, 11, 12]").replace("gen_ssu_module", "gen_ssu_sm100_module")
    two += JIT.format(name="other", majors="[9]")
    got = _scan(
        tmp_path, {"pkg/jit/ssu.py": two, "pkg/csrc/ssu_kernel.cu": "", "pkg/csrc/other_kernel.cu": ""}
    )
    assert [(f["line"], f["present"]) for f in got] == [(28, ["9"])]  # only the module without a 12.x variant


def test_majors_from_a_module_constant(tmp_path: Path) -> None:
    src = (
        "# supported_major_versions=[9] in a comment is none\n"
        "SUPPORTED_MAJOR_VERSIONS: tuple[int, ...] = (10,)\n"
        + JIT.format(name="norm", majors="list(SUPPORTED_MAJOR_VERSIONS)")
    )
    got = _scan(tmp_path, {"pkg/jit/norm.py": src, "pkg/csrc/norm_kernel.cu": ""})
    assert [(f["line"], f["present"], f["severity"]) for f in got] == [(8, ["10"], "medium")]


NESTED = """\
from . import env as jit_env
from .core import gen_jit_spec, get_nvcc_flags_list


def gen_mixed_module():
    def is_valid_block(block: int, mode: str) -> bool:
        if not mode.endswith("_MC"):
            return block == 1
        return block % 2 == 0

    sources = [jit_env.CSRC_DIR / "mixed_kernel.cu"] if is_valid_block(2, "a_MC") else []
    nvcc_flags = get_nvcc_flags_list(
        supported_major_versions=[9, 10]
    )
    return gen_jit_spec("mixed", sources, extra_cuda_cflags=nvcc_flags)
"""


def test_the_builder_is_named_not_a_helper_nested_above_the_call(tmp_path: Path) -> None:
    # the list is the module builder's; `is_valid_block` ended before it (a message naming the
    # helper sends the reader to the wrong function)
    got = _scan(
        tmp_path, {"pkg/jit/mixed.py": NESTED, "pkg/csrc/mixed_kernel.cu": "__global__ void k() {}\n"}
    )
    assert [(f["line"], f["symbol"], f["message"]) for f in got] == [
        (13, "gen_mixed_module", "gen_mixed_module lists 9, 10 but not 12.0")
    ]
