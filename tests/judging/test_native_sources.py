"""Evidence from the `.cu` sources a JIT module names: a table of arch flags for kernels that
issue tcgen05 / TMEM instructions is expected to lack 12.0 (low); for plain CUDA it is a gap."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_JIT = """
import torch

MODULES = {
    "fmha_a": {"sources": ["fmha/fmha_a_kernel.cu", "fmha/fmha_a_binding.cu"]},
    "fmha_b": {"sources": ["fmha/fmha_b_kernel.cu", "fmha/fmha_b_binding.cu"]},
}
_NVCC_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


def flags():
    major, minor = torch.cuda.get_device_capability()
    return _NVCC_FLAGS.get(f"sm{major}{minor}a", [])
"""


def _tree(kernel_body: str) -> dict[str, str]:
    return {
        "eng/jit/fmha.py": _JIT,
        "eng/data/csrc/fmha/fmha_a_kernel.cu": kernel_body,
        "eng/data/csrc/fmha/fmha_b_kernel.cu": kernel_body,
        "eng/data/csrc/fmha/fmha_a_binding.cu": "void run();\n",
        "eng/data/csrc/fmha/fmha_b_binding.cu": "void run();\n",
    }


def test_kernels_spelling_tmem_in_a_macro_name_make_the_table_expected(tmp_path: Path) -> None:
    # `TMEM_NCOLS`: the need is spelled in an identifier's prefix, as generated kernels do
    found = _scan(tmp_path, _tree("#define TMEM_NCOLS 512\n__global__ void k() {}\n"))
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/fmha.py", 7)]
    assert "'TMEM_' in eng/data/csrc/fmha/fmha_a_kernel.cu" in found[0].extra["evidence"]


def test_plain_cuda_kernels_leave_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _tree("__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"))
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit/fmha.py", 7)]
    assert "evidence" not in found[0].extra


_FAMILY_JIT = """
import torch

_LAUNCHERS = ["jit/attn_decode_jit_binding.cu", "jit/attn_context_jit_binding.cu"]
_TARGET_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


def flags():
    major, minor = torch.cuda.get_device_capability()
    return _TARGET_FLAGS.get(f"sm{major}{minor}a", [])
"""


def _family(kernel_body: str, tcgen05_bodies: int) -> dict[str, str]:
    # the module names only launchers; the kernel bodies it runs sit in the family's directory
    tree = {
        "eng/jit/attn.py": _FAMILY_JIT,
        "eng/data/csrc/attn/jit/attn_decode_jit_binding.cu": '#include "include/attn.h"\nvoid run();\n',
        "eng/data/csrc/attn/jit/attn_context_jit_binding.cu": '#include "include/attn.h"\nvoid run();\n',
        "eng/data/csrc/attn/include/attn.h": "void run();\n",
        "eng/data/csrc/norm.cu": "__global__ void norm() {}\n",
    }
    for i in range(6):
        body = kernel_body if i < tcgen05_bodies else "__global__ void k() {}\n"
        tree[f"eng/data/csrc/attn/cuda/variant_{i}/attn_{i}.cu"] = body
    return tree


def test_launchers_only_are_judged_by_their_family_s_directory(tmp_path: Path) -> None:
    found = _scan(tmp_path, _family('__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n', 4))
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/attn.py", 4)]
    assert "'tcgen05' in 4 of 8 sources under eng/data/csrc/attn/" in found[0].extra["evidence"]


def test_a_family_directory_mostly_plain_cuda_leaves_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _family('__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n', 2))
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit/attn.py", 4)]


_INCLUDING_JIT = """
import torch

_VARIANTS = {"chain": "prefill_chain_binding.cu", "prep": "prefill_prep_binding.cu"}
_GENERATED = "{ident}_binding.cu"
_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


def flags():
    major, minor = torch.cuda.get_device_capability()
    return _FLAGS.get(f"sm{major}{minor}a", [])
"""


def test_a_launcher_s_included_kernel_and_a_glob_of_its_own_directory_decide(tmp_path: Path) -> None:
    tree = {
        "eng/jit/prefill.py": _INCLUDING_JIT.replace('"{ident}', 'f"{ident}'),
        "eng/data/csrc/kda/prefill_chain_binding.cu": '#include "prefill_chain.cu"\nvoid run();\n',
        "eng/data/csrc/kda/prefill_prep_binding.cu": '#include "prefill_prep.cu"\nvoid run();\n',
        "eng/data/csrc/kda/prefill_chain.cu": "#define TMEM_COLS 128\n__global__ void chain() {}\n",
        "eng/data/csrc/kda/prefill_prep.cu": "#define TMEM_COLS 64\n__global__ void prep() {}\n",
    }
    # `f"{ident}_binding.cu"` matches launchers all over the tree: only the module's own
    # directory counts, so plain launchers elsewhere do not outvote the kernels it includes
    for i in range(6):
        tree[f"eng/data/csrc/other{i}/other{i}_binding.cu"] = "void run();\n"
    found = _scan(tmp_path, tree)
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/prefill.py", 5)]
    evidence = found[0].extra["evidence"]
    assert (
        "'TMEM_' in eng/data/csrc/kda/prefill_chain.cu (included by "
        "eng/data/csrc/kda/prefill_chain_binding.cu)" in evidence
    )


def test_a_pipeline_whose_heavy_stages_need_tcgen05_needs_it(tmp_path: Path) -> None:
    # one op's kernels: two tcgen05 GEMM stages beside four plain top-k / scheduling kernels and a
    # shared header; a quarter of the kernels is enough, the header is not one of them
    names = [f"mqa/mqa_{i}_kernel.cu" for i in range(6)]
    jit = _JIT.replace(
        '"fmha_a": {"sources": ["fmha/fmha_a_kernel.cu", "fmha/fmha_a_binding.cu"]},',
        f'"mqa": {{"sources": {names + ["flashinfer/layout.cuh"]}}},',
    ).replace('    "fmha_b": {"sources": ["fmha/fmha_b_kernel.cu", "fmha/fmha_b_binding.cu"]},\n', "")
    tree = {"eng/jit/fmha.py": jit, "eng/data/include/flashinfer/layout.cuh": "struct Layout {};\n"}
    for i in range(6):
        body = 'asm volatile("tcgen05.commit.cta_group::1");\n' if i in (1, 4) else ""
        tree[f"eng/data/csrc/mqa/mqa_{i}_kernel.cu"] = body + "__global__ void k() {}\n"
    found = _scan(tmp_path, tree)
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/fmha.py", 6)]
    assert "(2 of 6 sources it names)" in found[0].extra["evidence"]


def test_a_host_module_inherits_the_needs_of_the_jit_module_of_its_name(tmp_path: Path) -> None:
    # the host in `eng/ops/blackwell/` imports the registry of the same name in `eng/jit/`
    # through a relative import three dots up; the registry names tcgen05 kernels
    tree = {
        "eng/__init__.py": "",
        "eng/ops/__init__.py": "",
        "eng/ops/blackwell/__init__.py": "",
        "eng/jit/__init__.py": "",
        "eng/jit/prefill_backend.py": (
            'KERNELS = ["cp/cp_a_kernel.cu", "cp/cp_b_kernel.cu"]\n'
            '_ARCH_FLAGS = {"sm_100a": ["-arch=sm_100a"], "sm_103a": ["-arch=sm_103a"]}\n'
        ),
        "eng/ops/blackwell/prefill_backend.py": """
        import torch

        from ...jit.prefill_backend import (
            KERNELS,
        )


        def _arch_for(device):
            capability = torch.cuda.get_device_capability(device)
            if capability == (10, 0):
                return KERNELS
            raise ValueError(f"CP-prefill is not built for {capability}")
    """,
        "eng/data/csrc/cp/cp_a_kernel.cu": 'asm volatile("tcgen05.alloc.cta_group::1");\n',
        "eng/data/csrc/cp/cp_b_kernel.cu": "#define TMEM_COLS 64\n",
    }
    found = [f for f in _scan(tmp_path, tree) if f.path == "eng/ops/blackwell/prefill_backend.py"]
    assert [(f.rule, f.severity) for f in found] == [("gate-excludes-arch", "low")]
    assert "via eng.jit.prefill_backend" in found[0].extra["evidence"]


def test_a_generated_source_over_the_read_limit_is_read_by_its_head(tmp_path: Path) -> None:
    # FlashInfer's `..._generated_sm100.cu` runs to 4.5 MB: what it spells at its start counts
    body = '__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n' + "// pad\n" * (5 << 17)
    assert len(body) > 4 << 20
    found = _scan(tmp_path, _tree(body))
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/fmha.py", 7)]


_PAIRED_JIT = """
import torch

_BINDING = "warp_decode_binding.cu"
_CONTRACT = "warp_decode_contract.cuh"
_TARGET_ARCH = {"sm100a": "sm_100a", "sm103a": "sm_103a"}


def arch():
    major, minor = torch.cuda.get_device_capability()
    return _TARGET_ARCH.get(f"sm{major}{minor}a")
"""


def test_generated_kernel_and_binding_pairs_are_judged_by_their_kernels(tmp_path: Path) -> None:
    # a module naming its binding and a contract header; the generated kernels, each with a
    # `<hash>_binding.cu` beside it, sit under generated/sm_100a/: the kernels decide
    tree = {
        "eng/jit/warp_decode.py": _PAIRED_JIT,
        "eng/data/csrc/warp_decode/warp_decode_binding.cu": "void run();\n",
        "eng/data/csrc/warp_decode/warp_decode_contract.cuh": "struct Contract {};\n",
    }
    for i in range(4):
        tree[f"eng/data/csrc/warp_decode/generated/sm_100a/wd_{i}_kernel.cu"] = (
            '__global__ void k() { asm("tcgen05.mma.cta_group::1.kind::f16"); }\n'
        )
        tree[f"eng/data/csrc/warp_decode/generated/sm_100a/wd_{i}_binding.cu"] = "void run();\n"
    found = _scan(tmp_path, tree)
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/warp_decode.py", 5)]
    assert "'tcgen05' in 4 of 5 sources under eng/data/csrc/warp_decode/" in found[0].extra["evidence"]


_GATED_CALL = """
import torch


def run(x):
    if torch.cuda.get_device_capability()[0] == 10:
        from eng.ops.attention.dsv4.wo_a import fused_wo_a

        return fused_wo_a(x)
    return x @ x
"""

_JIT_WRAPPER = """
from eng.jit.utils import load_jit


def fused_wo_a(x):
    return load_jit("fused_wo_a", cuda_files=["deepseek/wo_a_fused.cuh"]).run(x)
"""


def _wo_a_tree(cuh: str) -> dict[str, str]:
    # the wrapper tests no capability and names no kernel word: kept for the sources it names; the
    # package above it states tcgen05 of another kernel, no fact of the module below it
    return {
        "eng/model.py": _GATED_CALL,
        "eng/ops/attention/__init__.py": "# tcgen05 + TMEM: datacenter Blackwell only\nimport torch\n",
        "eng/ops/attention/dsv4/__init__.py": "",
        "eng/ops/attention/dsv4/wo_a.py": _JIT_WRAPPER,
        "eng/jit/csrc/deepseek/wo_a_fused.cuh": cuh,
    }


def test_a_jit_module_naming_only_its_sources_says_what_a_gated_call_needs(tmp_path: Path) -> None:
    found = _scan(tmp_path, _wo_a_tree('__device__ void f() { asm("tcgen05.mma.cta_group::1"); }\n'))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/model.py", 5)]
    assert "wo_a_fused.cuh" in found[0].consequence


def test_a_package_s_words_are_no_evidence_for_a_module_below_it(tmp_path: Path) -> None:
    found = _scan(tmp_path, _wo_a_tree("__device__ float add(float a, float b) { return a + b; }\n"))
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/model.py", 5)]


_PTX_RUNTIME = '''"""Assembles the retained PTX programs under ``csrc/kda/ptx/`` for the device."""
import torch


def cubin(name):
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (10, 3):
        raise RuntimeError("the retained PTX targets sm_103a")
    return name
'''


def test_retained_ptx_programs_say_what_their_runtime_needs(tmp_path: Path) -> None:
    tree = {"eng/kda/ptx_runtime.py": _PTX_RUNTIME, "eng/data/csrc/kda/ptx/shim.cc": "int main();\n"}
    for name in ("fixed_h64", "varlen_h64"):
        ptx = ".version 9.0\n.target sm_103a\ntcgen05.alloc.cta_group::1;\n"
        tree[f"eng/data/csrc/kda/ptx/{name}.ptx"] = ptx
    found = _scan(tmp_path, tree)
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kda/ptx_runtime.py", 7)]
    assert "'tcgen05' in 2 of 2 sources under eng/data/csrc/kda/ptx/" in found[0].consequence


_BINDING_JIT = """
import torch

_SOURCES = ["kda/kda_evolution_binding.cuh", "kda/kda_binding_common.cuh"]
_NVCC_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


def flags():
    major, minor = torch.cuda.get_device_capability()
    return _NVCC_FLAGS.get(f"sm{major}{minor}a", [])
"""


def _binding_family(evolution_body: str) -> dict[str, str]:
    # the binding names its kernels by stem (`kda_evolution_<variant>.cu`), beside many other
    # kernels of the directory that need nothing
    tree = {
        "eng/jit/kda_evolution.py": _BINDING_JIT,
        "eng/data/csrc/kda/kda_evolution_binding.cuh": "void run();\n",
        "eng/data/csrc/kda/kda_binding_common.cuh": "void common();\n",
    }
    for variant in ("a", "b"):
        tree[f"eng/data/csrc/kda/kda_evolution_{variant}.cu"] = evolution_body
    for i in range(6):
        tree[f"eng/data/csrc/kda/kda_decode_{i}.cu"] = "__global__ void k() {}\n"
    return tree


def test_a_bindings_own_kernels_by_stem_decide_before_its_directory(tmp_path: Path) -> None:
    found = _scan(tmp_path, _binding_family('__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n'))
    assert _brief(found) == [("table-missing-arch", "low", "eng/jit/kda_evolution.py", 4)]
    assert "under eng/data/csrc/kda/kda_evolution_*" in found[0].extra["evidence"]


def test_a_bindings_plain_kernels_leave_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _binding_family("__global__ void k(float* x) { x[0] = 1.f; }\n"))
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit/kda_evolution.py", 4)]


_CLUSTER_CALL = _GATED_CALL.replace("[0] == 10:", "[0] >= 9:")
_CLUSTER_KERNEL = (
    "__global__ void __cluster_dims__(2, 1, 1) k(float* x) {\n"
    '  asm volatile("barrier.cluster.arrive;");\n'
    "  x[threadIdx.x] *= 2.f;\n"
    "}\n"
)


def test_cluster_kernels_are_what_a_gpu_before_hopper_lacks(tmp_path: Path) -> None:
    tree = {**_wo_a_tree(_CLUSTER_KERNEL), "eng/model.py": _CLUSTER_CALL}
    found = _scan(tmp_path, tree, arch="8.9")
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/model.py", 5)]
    assert found[0].consequence.startswith("expected: that path needs clusters (read from '__cluster_dims__'")


def test_cluster_kernels_leave_a_tcgen05_source_needing_tcgen05(tmp_path: Path) -> None:
    # the cluster launch comes first in the source: the instruction set is still what it needs
    cuh = _CLUSTER_KERNEL + '__device__ void f() { asm("tcgen05.mma.cta_group::1"); }\n'
    found = _scan(tmp_path, _wo_a_tree(cuh))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/model.py", 5)]
    assert "tcgen05" in found[0].consequence


def test_tma_bulk_stores_spelled_by_libcu_are_what_an_ada_lacks(tmp_path: Path) -> None:
    cuh = "__device__ void store(void* dst, void* src) { cuda::ptx::cp_async_bulk(dst, src, 1024u); }\n"
    tree = {**_wo_a_tree(cuh), "eng/model.py": _CLUSTER_CALL}
    (found,) = _scan(tmp_path, tree, arch="8.9")
    assert (found.severity, found.extra["evidence"].split(" in ")[0]) == ("low", "'cp_async_bulk'")
    # a Blackwell has TMA: the same gate read at 12.0 leaves it nothing to lack
    assert _scan(tmp_path, tree, arch="12.0") == []


_REDUX_MAX = """
__global__ void softmax(const float* x, float* out) {
    float m = x[threadIdx.x];
    asm volatile("redux.sync.max.f32 %0, %1, 0xffffffff;" : "=f"(m) : "f"(m));
    out[threadIdx.x] = m;
}
"""
_STOCHASTIC_ROUNDING = """
__global__ void store(const float* x, unsigned* out, unsigned bits) {
    unsigned r;
    asm("cvt.rs.satfinite.bf16x2.f32 %0, %1, %2, %3;" : "=r"(r) : "f"(x[0]), "f"(x[1]), "r"(bits));
    out[threadIdx.x] = r;
}
"""


def test_kernels_spelling_an_sm100_family_only_instruction_make_the_table_expected(tmp_path: Path) -> None:
    """`redux.sync.max.f32` and `cvt.rs` build for sm_100a/sm_103a alone (FlashInfer's Cake softmax,
    its MoE router): a table of SM100-family flags for them leaves 12.0 out as expected."""
    for body, word in ((_REDUX_MAX, "redux.sync.max.f32"), (_STOCHASTIC_ROUNDING, "cvt.rs.")):
        found = _scan(tmp_path / word, _tree(body))
        assert _brief(found) == [("table-missing-arch", "low", "eng/jit/fmha.py", 7)]
        assert f"'{word}' in eng/data/csrc/fmha/fmha_a_kernel.cu" in found[0].extra["evidence"]


def test_an_integer_reduction_is_no_such_instruction(tmp_path: Path) -> None:
    found = _scan(tmp_path, _tree(_REDUX_MAX.replace("redux.sync.max.f32", "redux.sync.max.s32")))
    assert _brief(found) == [("table-missing-arch", "medium", "eng/jit/fmha.py", 7)]


_OWN_CSRC_JIT = """
from pathlib import Path

import torch

_OPERATOR_DIR = "gqa_decode"


def _operator_dir() -> Path:
    return Path(__file__).resolve().parent / "csrc" / _OPERATOR_DIR


def _headers_there(include: Path) -> bool:
    return (include / "eng" / "layout.cuh").is_file()


def check() -> None:
    if torch.cuda.get_device_capability() != (11, 0):
        raise RuntimeError("GQA decode requires compute capability 11.0")
"""


def _own_csrc(kernel_body: str) -> dict[str, str]:
    # the sources ship in a `csrc/` beside the module, listed by a manifest read at run time;
    # the only file it names is a shared header of another family's, checked for existence
    return {
        "eng/experimental/gqa/jit.py": _OWN_CSRC_JIT,
        "eng/experimental/gqa/csrc/gqa_decode/sm_110a/gqa_short_kernel.cu": kernel_body,
        "eng/experimental/gqa/csrc/gqa_decode/sm_110a/gqa_long_kernel.cu": kernel_body,
        "eng/experimental/gqa/csrc/gqa_decode/sm_110a/gqa_short_binding.cu": "void run();\n",
        "eng/data/include/eng/attention/sm120/layout.cuh": "struct Layout {};\n",
        "eng/data/include/eng/layout.cuh": "struct Layout {};\n",
    }


def test_the_csrc_a_module_ships_beside_it_is_its_evidence(tmp_path: Path) -> None:
    found = _scan(tmp_path, _own_csrc('__global__ void k() { asm("tcgen05.mma.cta_group::1"); }\n'))
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/experimental/gqa/jit.py", 17)]
    assert "under eng/experimental/gqa/csrc/" in found[0].extra["evidence"]


def test_portable_sources_beside_it_leave_the_gate_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _own_csrc("__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"))
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/experimental/gqa/jit.py", 17)]
