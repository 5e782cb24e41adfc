"""Capability tables judged by what a missing entry does and what the code they key needs, one
pattern per test: a small tree, the exact table findings (or the silence) for 12.0."""

from __future__ import annotations

from pathlib import Path

from capgap.findings import Finding
from tests.judging.test_decisions import _brief, _scan


def _tables(found: list[Finding]) -> list[tuple[str, str, str, int]]:
    return [b for b in _brief(found) if b[0] == "table-missing-arch"]


# ---------------------------------------------------------------- a missing entry lifts a bound


def test_a_missing_bound_lifts_a_restriction_and_is_no_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/tail.py": """
        import torch

        # Largest row the fused tail serves per capability (None: any).
        _TAIL_MAX_VOCAB_BY_CAPABILITY = {(9, 0): None, (10, 0): None, (10, 3): 196608}


        def fuse_tail(vocab):
            capability = torch.cuda.get_device_capability()
            bound = _TAIL_MAX_VOCAB_BY_CAPABILITY.get((capability[0], capability[1]))
            if bound is not None and vocab > bound:
                return False
            return True
    """
        },
    )
    assert _tables(found) == []


_ONE_SHOT = """
        import torch

        MiB = 1024 * 1024
        # Max size per world size per capability to use the one-shot all-reduce
        _ONE_SHOT_MAX_SIZES_MB = {{90: {{2: 32, 4: 2, 8: 0.5}}, 100: {{2: 32, 4: 4, 8: 1}}}}


        def use_oneshot(world_size, nbytes):
            major, minor = torch.cuda.get_device_capability()
            capability = major * 10 + minor
            if capability is None:
                max_one_shot = None
            else:
                max_one_shot = _ONE_SHOT_MAX_SIZES_MB.get(capability, {{}}).get(world_size)
            return {answer}
    """


def test_a_missing_threshold_returned_as_no_bound_is_no_gap(tmp_path: Path) -> None:
    """vLLM's `_FI_ALLREDUCE_ONE_SHOT_MAX_SIZES_MB`: no entry, no size limit on one-shot (the
    fused all-reduce still runs); read through `.get(cap, {}).get(world_size)` in an `else:`."""
    answer = "max_one_shot is None or nbytes <= max_one_shot * MiB"
    found = _scan(tmp_path, {"eng/ar.py": _ONE_SHOT.format(answer=answer)})
    assert _tables(found) == []


def test_a_missing_threshold_that_answers_no_is_a_gap(tmp_path: Path) -> None:
    answer = "max_one_shot is not None and nbytes <= max_one_shot * MiB"
    found = _scan(tmp_path, {"eng/ar.py": _ONE_SHOT.format(answer=answer)})
    assert [(b[1], b[3]) for b in _tables(found)] == [("medium", 5)]


def test_a_missing_value_that_turns_the_path_off_is_a_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/tail.py": """
        import torch

        _TAIL_MAX_VOCAB_BY_CAPABILITY = {(9, 0): 131072, (10, 0): 262144}


        def fuse_tail(vocab):
            capability = torch.cuda.get_device_capability()
            bound = _TAIL_MAX_VOCAB_BY_CAPABILITY.get((capability[0], capability[1]))
            if bound is None:
                return False
            return vocab <= bound
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/tail.py", 3)]


def test_a_size_the_table_can_only_shrink_is_no_gap(tmp_path: Path) -> None:
    # vLLM's CUSTOM_ALL_REDUCE_MAX_SIZES: `max_size = min(T[cap][n], max_size)` under `if cap in T`
    found = _scan(
        tmp_path,
        {
            "eng/sizes.py": """
        MiB = 1024 * 1024
        CUSTOM_ALL_REDUCE_MAX_SIZES = {"9.0": {2: 64 * MiB}, "10.0": {2: 2 * MiB}}
    """,
            "eng/custom.py": """
        import torch

        from eng.sizes import CUSTOM_ALL_REDUCE_MAX_SIZES


        class CustomAllreduce:
            def __init__(self, world_size, symm_mem_enabled, max_size=8 * 1024 * 1024):
                capability = torch.cuda.get_device_capability()
                device_capability_str = f"{capability[0]}.{capability[1]}"
                if (
                    symm_mem_enabled
                    and device_capability_str in CUSTOM_ALL_REDUCE_MAX_SIZES
                    and world_size in CUSTOM_ALL_REDUCE_MAX_SIZES[device_capability_str]
                ):
                    max_size = min(
                        CUSTOM_ALL_REDUCE_MAX_SIZES[device_capability_str][world_size],
                        max_size,
                    )
                self.max_size = max_size
    """,
        },
    )
    assert _tables(found) == []


# ---------------------------------------------------------------- the authors' words


_TUNING = """
import torch

{comment}
_FLAG_LOCAL_SELECT = 1024
_LOCAL_SELECT_MAX_K_BY_CAPABILITY = {{(9, 0): 10, (10, 0): 20, (10, 3): 32}}


def local_select(top_k):
    capability = torch.cuda.get_device_capability()
    cap = _LOCAL_SELECT_MAX_K_BY_CAPABILITY.get((capability[0], capability[1]), 0)
    if top_k > cap:
        return 0
    return _FLAG_LOCAL_SELECT
"""


def test_tuning_the_comment_says_the_target_goes_without_is_low(tmp_path: Path) -> None:
    comment = "# Measured on H100, B200 and GB300. RTX PRO keeps the plain leader-push form."
    found = _scan(tmp_path, {"eng/sampling.py": _TUNING.format(comment=comment)})
    assert _tables(found) == [("table-missing-arch", "low", "eng/sampling.py", 5)]
    assert found[0].extra["tuning"] is True
    assert "RTX PRO keeps the plain leader-push form" in found[0].extra["evidence"]


def test_tuning_the_comment_says_a_missing_capability_keeps_a_default_is_low(tmp_path: Path) -> None:
    comment = "# A capability absent from the table keeps the chunk rule."
    found = _scan(tmp_path, {"eng/sampling.py": _TUNING.format(comment=comment)})
    assert _tables(found) == [("table-missing-arch", "low", "eng/sampling.py", 5)]


def test_a_comment_that_says_the_entry_is_still_to_come_leaves_a_gap(tmp_path: Path) -> None:
    comment = "# SM120 is not measured yet, so it keeps the plain form for now."
    found = _scan(tmp_path, {"eng/sampling.py": _TUNING.format(comment=comment)})
    assert _tables(found) == [("table-missing-arch", "medium", "eng/sampling.py", 5)]


def test_words_about_other_devices_do_not_excuse_a_table_of_builds(tmp_path: Path) -> None:
    # FlashInfer's _TARGET_BY_CAPABILITY: "any other device takes the torch path", yet the
    # kernels are plain CUDA: the table is a gap, not tuning
    found = _scan(
        tmp_path,
        {
            "eng/concat.py": """
        import torch

        # Any other device (including other 10.x / 12.x parts) takes the torch path.
        _TARGET_BY_CAPABILITY = {(10, 0): "sm100a", (10, 3): "sm103a"}


        def target():
            capability = torch.cuda.get_device_capability()
            return _TARGET_BY_CAPABILITY.get((capability[0], capability[1]))
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/concat.py", 4)]


# ---------------------------------------------------------------- what the keyed code needs

_FLAGS_TABLE = """
import torch

from .{jit} import build

{name} = {{"sm_100a": {values}, "sm_103a": {values}}}


def cells():
    major, minor = torch.cuda.get_device_capability()
    return {name}[f"sm_{{major}}{{minor}}a"]
"""


def test_a_sibling_module_s_comment_is_evidence_for_the_tables_of_its_importer(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/attn/backend.py": _FLAGS_TABLE.format(jit="jit", name="_CELLS", values=4),
            "eng/attn/jit.py": """
        import torch

        # The programs use tcgen05 TMEM and are exact-architecture payloads.
        ARCH_NVCC_FLAGS = {"sm_100a": ["-arch=sm_100a"], "sm_103a": ["-arch=sm_103a"]}
        MODULES = {"a": {"sources": ["attn/a_kernel.cu", "attn/a_binding.cu"]}}


        def build(arch):
            return ARCH_NVCC_FLAGS[arch]
    """,
            "eng/data/csrc/attn/a_kernel.cu": "__global__ void k(float* x) { x[0] = 1.f; }\n",
        },
    )
    backend = next(f for f in found if f.path == "eng/attn/backend.py")
    assert backend.severity == "low"
    assert "tcgen05" in backend.extra["evidence"] and "via eng.attn.jit" in backend.extra["evidence"]


def _smem_tree(total: int) -> dict[str, str]:
    return {
        "eng/jit/moe.py": """
        import torch

        _SOURCES = ["moe/moe_h2688.cu", "moe/moe_h3072.cu"]
        ARCH_TARGETS = {"sm90a": ["-arch=sm_90a"], "sm100a": ["-arch=sm_100a"]}


        def flags():
            major, minor = torch.cuda.get_device_capability()
            return ARCH_TARGETS.get(f"sm{major}{minor}a", [])
    """,
        "eng/data/csrc/moe/moe_h2688.cu": f"#define SMEM_TOTAL {total}\n__global__ void k() {{}}\n",
        "eng/data/csrc/moe/moe_h3072.cu": f"#define SMEM_TOTAL {total}\n__global__ void k() {{}}\n",
    }


def test_kernels_that_need_more_shared_memory_than_the_target_has_make_the_table_expected(
    tmp_path: Path,
) -> None:
    found = _scan(tmp_path, _smem_tree(221696))
    assert _tables(found) == [("table-missing-arch", "low", "eng/jit/moe.py", 4)]
    assert "'SMEM_TOTAL 221696' in eng/data/csrc/moe/moe_h2688.cu" in found[0].extra["evidence"]
    assert "more than 163 KB of shared memory per block" in found[0].consequence


def test_kernels_that_fit_the_target_s_shared_memory_leave_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _smem_tree(36992))
    assert _tables(found) == [("table-missing-arch", "medium", "eng/jit/moe.py", 4)]


def test_shared_memory_a_python_module_states_for_its_program_is_evidence(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/mla/backend.py": """
        import torch

        SMEM_BYTES = 192256  # dynamic shared memory of the generated program
        SMEM_CAP_BYTES = 232448  # the device's ceiling: no need of the program
        ARCH_BY_COMPUTE_CAPABILITY = {(10, 0): "sm_100a", (10, 3): "sm_103a"}


        def device_arch():
            arch = ARCH_BY_COMPUTE_CAPABILITY.get(torch.cuda.get_device_capability())
            if arch is None:
                raise RuntimeError("requires 10.0 or 10.3")
            return arch
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "low", "eng/mla/backend.py", 5)]
    assert found[0].extra["evidence"] == "'SMEM_BYTES' 192256 bytes (line 3) in the module"


def test_a_device_limit_is_no_need_of_the_program(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/mla/backend.py": """
        import torch

        SMEM_CAP_BYTES = 232448  # the measured SM100 dynamic-smem ceiling
        ARCH_BY_COMPUTE_CAPABILITY = {(10, 0): "sm_100a", (10, 3): "sm_103a"}


        def device_arch():
            return ARCH_BY_COMPUTE_CAPABILITY.get(torch.cuda.get_device_capability())
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/mla/backend.py", 4)]


def _family(tcgen05_kernels: int) -> dict[str, str]:
    files = {
        "eng/jit/gdn.py": '''
        """JIT loader: every variant in ``csrc/gdn/fam/manifest.json`` names one kernel source."""
        import torch

        _ARCH_ACTIVE_CLUSTERS = {"sm_100a": 148, "sm_103a": 160}


        def clusters():
            major, minor = torch.cuda.get_device_capability()
            arch = f"sm_{major}{minor}a"
            if arch not in _ARCH_ACTIVE_CLUSTERS:
                raise NotImplementedError(arch)
            return _ARCH_ACTIVE_CLUSTERS[arch]
    ''',
    }
    for i in range(4):
        body = "tcgen05.mma.cta_group::1" if i < tcgen05_kernels else "mma.sync.aligned"
        files[f"eng/data/csrc/gdn/fam/k{i}.cu"] = f'__global__ void k() {{ asm("{body}"); }}\n'
    return files


def test_the_source_directory_a_module_names_decides_when_its_kernels_need_tcgen05(tmp_path: Path) -> None:
    found = _scan(tmp_path, _family(3))
    assert _tables(found) == [("table-missing-arch", "low", "eng/jit/gdn.py", 4)]
    assert "3 of 4 sources under eng/data/csrc/gdn/fam/" in found[0].extra["evidence"]


def test_a_named_source_directory_of_plain_cuda_leaves_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(tmp_path, _family(1))
    assert _tables(found) == [("table-missing-arch", "medium", "eng/jit/gdn.py", 4)]


_CATALOG = """
import torch

ARCHES = {(10, 0): "sm_100a", (10, 3): "sm_103a"}


def arch_for_capability():
    arch = ARCHES.get(torch.cuda.get_device_capability())
    if arch is None:
        raise RuntimeError("no exported programs for this capability")
    return arch
"""


def test_a_kernel_family_the_module_s_path_is_named_after_is_evidence(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/experimental/deepgemm_dense_mqa/catalog.py": _CATALOG})
    assert _tables(found) == [
        ("table-missing-arch", "low", "eng/experimental/deepgemm_dense_mqa/catalog.py", 3)
    ]
    assert found[0].extra["evidence"] == "'deepgemm_dense_mqa' in the module's path"


def test_a_path_named_after_no_kernel_family_is_no_evidence(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/experimental/fused_router/catalog.py": _CATALOG})
    assert _tables(found) == [("table-missing-arch", "medium", "eng/experimental/fused_router/catalog.py", 3)]


def _importers(*readers: str) -> dict[str, str]:
    files = {
        "eng/proj/decode_table.py": """
        DECODE_TABLE_OVERRIDES = {"sm_100a": {"384,28": {"route": "gemm"}}, "sm_103a": {}}


        def decode_table(arch):
            overrides = DECODE_TABLE_OVERRIDES.get(arch)
            if overrides is None:
                raise ValueError(arch)
            return overrides
    """
    }
    for i, doc in enumerate(readers):
        files[f"eng/proj/reader{i}.py"] = f'''
        """{doc}"""
        import torch

        from .decode_table import decode_table


        def run():
            major, minor = torch.cuda.get_device_capability()
            return decode_table(f"sm_{{major}}{{minor}}a")
    '''
    return files


def test_what_every_importer_in_its_package_needs_is_evidence_for_a_module_of_tables(tmp_path: Path) -> None:
    found = _scan(tmp_path, _importers("The FP8 projection: a tcgen05 GEMM with TMA multicast clusters."))
    assert _tables(found) == [("table-missing-arch", "low", "eng/proj/decode_table.py", 1)]
    assert "in eng/proj/reader0.py, which imports it" in found[0].extra["evidence"]


def test_a_module_whose_own_kernel_sources_are_not_shipped_still_takes_its_importers_needs(
    tmp_path: Path,
) -> None:
    """FlashInfer 0.7.4's `cake_mla_varq_dcp_decode/cake_jit.py` names generated `*_kernel.cu` files
    the wheel does not ship, and a shared header it does: its kernels were not read, so what its
    importer states (`CLUSTER_SIZE = 2  # cta_group::2`) is the evidence, not "needs nothing"."""
    files = {
        "eng/data/include/layout.cuh": "struct Layout { int stride; };\n",
        "eng/decode/cake_jit.py": """
        PROGRAMS = {
            "main": {"sources": ["decode/decode_0a58_kernel.cu", "decode/decode_0a58_binding.cu"]},
        }
        HEADERS = ["include/layout.cuh"]
        ARCH_NVCC_FLAGS = {"sm_100a": ["-arch=sm_100a"], "sm_103a": ["-arch=sm_103a"]}


        def gen_program(program, arch):
            if arch not in ARCH_NVCC_FLAGS:
                raise ValueError(arch)
            return ARCH_NVCC_FLAGS[arch]
    """,
        "eng/decode/cake_backend.py": """
        import torch

        from .cake_jit import gen_program

        CLUSTER_SIZE = 2  # CTAs per cluster (cta_group::2)


        def run():
            major, minor = torch.cuda.get_device_capability()
            return gen_program("main", f"sm_{major}{minor}a")
    """,
    }
    found = _scan(tmp_path, files)
    tables = [f for f in found if f.path == "eng/decode/cake_jit.py" and f.rule == "table-missing-arch"]
    assert [(f.severity, f.line) for f in tables] == [("low", 5)]
    assert "cta_group" in tables[0].extra["evidence"]


def test_an_importer_that_needs_nothing_the_target_lacks_leaves_the_table_a_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        _importers(
            "The FP8 projection: a tcgen05 GEMM.", "The portable mma.sync fallback of the projection."
        ),
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/proj/decode_table.py", 1)]


def test_feature_words_in_the_table_s_values_are_evidence(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/jit/comm.py": """
        import torch

        _MOE_ALLTOALL_GENERATED_SOURCE = {
            "sm100a": "mnnvl_moe_alltoall_sm100.cu",
            "sm103a": "mnnvl_moe_alltoall_sm103.cu",
        }
        _MOE_ALLTOALL_NVCC_FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}


        def source():
            major, minor = torch.cuda.get_device_capability()
            return _MOE_ALLTOALL_GENERATED_SOURCE[f"sm{major}{minor}a"]
    """
        },
    )
    # the flags of those sources, keyed alike, key the same code
    assert _tables(found) == [
        ("table-missing-arch", "low", "eng/jit/comm.py", 3),
        ("table-missing-arch", "low", "eng/jit/comm.py", 7),
    ]
    assert found[0].extra["evidence"] == "'mnnvl_moe_alltoall_' in its values"
    assert found[1].extra["evidence"] == (
        "'mnnvl_moe_alltoall_' in the values of _MOE_ALLTOALL_GENERATED_SOURCE (line 3), keyed alike"
    )


# ---------------------------------------------------------------- whose reads count


def test_a_private_table_is_read_only_by_its_own_module(tmp_path: Path) -> None:
    # another module's `_ARCHES[cap]` (a KeyError there) says nothing about this `_ARCHES`
    own = """
        import torch

        _ARCHES = {(10, 0): "sm_100a", (10, 3): "sm_103a"}


        def arch():
            return _ARCHES.get(torch.cuda.get_device_capability())
    """
    other = """
        import torch

        from eng.a import _ARCHES


        def arch():
            return _ARCHES[torch.cuda.get_device_capability()]
    """
    found = _scan(tmp_path, {"eng/a.py": own, "eng/b.py": other})
    assert _tables(found) == [("table-missing-arch", "medium", "eng/a.py", 3)]


def test_a_multicast_check_in_another_function_or_for_another_configuration_is_no_blocker(
    tmp_path: Path,
) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/symm.py": """
        import torch

        SYMM_MAX_SIZES = {"9.0": {2: 64}, "10.0": {2: 8}}


        class Comm:
            def __init__(self, world_size, same_node):
                capability = torch.cuda.get_device_capability()
                device_capability = f"{capability[0]}.{capability[1]}"
                if device_capability not in SYMM_MAX_SIZES:
                    return
                self.max_size = SYMM_MAX_SIZES[device_capability][world_size]
                if not same_node and not self.multicast_ptr:
                    self.disabled = True

            def _init_buffer(self, handle):
                if handle.multicast_ptr == 0:
                    return
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/symm.py", 3)]
    assert found[0].extra["access"] == "in"
    assert "blockers" not in found[0].extra


def test_a_table_keyed_by_what_another_gives_is_judged_at_the_first_lookup(tmp_path: Path) -> None:
    # on 12.0 `_TARGET_BY_CAPABILITY.get()` already came back empty: `_FLAGS[...]`'s KeyError is
    # not what 12.0 meets, and both entries are one fix (issue 14, point 9: a chain, one finding)
    found = _scan(
        tmp_path,
        {
            "eng/jit/concat.py": """
        import torch

        _FLAGS = {"sm100a": ["-arch=sm_100a"], "sm103a": ["-arch=sm_103a"]}
        _TARGET_BY_CAPABILITY = {(10, 0): "sm100a", (10, 3): "sm103a"}


        def target():
            capability = torch.cuda.get_device_capability()
            return _TARGET_BY_CAPABILITY.get((capability[0], capability[1]))


        def flags():
            major, minor = torch.cuda.get_device_capability()
            return _FLAGS[f"sm{major}{minor}a"]
    """
        },
    )
    # one gap: the first lookup's table rates it and names the other as a blocker of its fix
    assert _tables(found) == [
        ("table-missing-arch", "low", "eng/jit/concat.py", 3),
        ("table-missing-arch", "medium", "eng/jit/concat.py", 4),
    ]
    flags, targets = found
    assert flags.extra["follows"] == "_TARGET_BY_CAPABILITY (line 4)"
    assert targets.extra["also"] == ["_FLAGS (line 3)"]
    assert targets.extra["blockers"] == [
        {
            "path": "eng/jit/concat.py",
            "line": 3,
            "source": "_FLAGS",
            "why": "keyed by what _TARGET_BY_CAPABILITY gives: it needs an entry for 12.0 too",
        }
    ]
    assert "the fix also needs an entry in _FLAGS (line 3)" in targets.consequence


def test_an_arch_the_facts_do_not_list_yet_does_not_hide_a_tuple_keyed_table(tmp_path: Path) -> None:
    # FlashInfer's `_LARGE_OCCUPANCY_MIN_BLOCKS_PER_MP` keys Rubin's (10, 7) and (10, 9) too
    found = _scan(
        tmp_path,
        {
            "eng/topk.py": """
        import torch

        _MIN_BLOCKS_PER_MP = {(10, 0): 4, (10, 3): 4, (10, 7): 2, (10, 9): 2}
        _RUBIN_ARCHS = ("sm_107", "sm_109")


        def min_blocks():
            compute_capability = torch.cuda.get_device_capability()
            try:
                return _MIN_BLOCKS_PER_MP[compute_capability]
            except KeyError:
                raise ValueError("Unsupported top-k architecture") from None
    """
        },
    )
    assert _tables(found) == [("table-missing-arch", "medium", "eng/topk.py", 3)]
    assert found[0].present == ("(10, 0)", "(10, 3)", "(10, 7)", "(10, 9)")


def test_a_read_after_a_guard_that_refuses_unlisted_keys_raises_that_guard_s_error(tmp_path: Path) -> None:
    from tests.judging.test_decisions import _scan

    jit = """
        import torch

        PROGRAMS = {"gemm": {"arches": ["sm_100a", "sm_103a"]}}
        ARCH_NVCC_FLAGS = {"sm_100a": ["-arch=sm_100a"], "sm_103a": ["-arch=sm_103a"]}

        def device_arch():
            major, minor = torch.cuda.get_device_capability()
            return f"sm_{major}{minor}a"

        def spec(name):
            arch = device_arch()
            if arch not in PROGRAMS[name]["arches"]:
                raise NotImplementedError(f"{name} is not built for {arch}")
            return ARCH_NVCC_FLAGS[arch]
    """
    (found,) = [f for f in _scan(tmp_path, {"eng/jit.py": jit}) if f.symbol == "ARCH_NVCC_FLAGS"]
    assert found.severity == "medium"
    assert found.consequence.startswith("raises NotImplementedError")
    assert found.extra["access"] == "guarded"


def test_a_key_refused_before_an_assignment_reads_the_table_is_no_key_error(tmp_path: Path) -> None:
    # the read sits in an assignment; the guard two statements above refuses every arch it lacks
    found = _scan(
        tmp_path,
        {
            "eng/jit.py": """
        sm100a_flags = ["-DSM100A"]
        sm103a_flags = ["-DSM103A"]
        ARCH_FLAGS = {
            "sm_100a": sm100a_flags,
            "sm_103a": sm103a_flags,
        }

        def gen_program(program: str, arch: str):
            record = PROGRAMS[program]
            if arch not in record["arches"]:
                raise ValueError(f"program {program!r} is not built for {arch!r}")
            flags = [*ARCH_FLAGS[arch], "--use_fast_math"]
            return flags
    """,
        },
    )
    tables = [f for f in found if f.rule == "table-missing-arch"]
    assert [(f.severity, f.consequence) for f in tables] == [
        ("medium", "raises ValueError before the read (eng/jit.py:12)")
    ]


def test_a_read_in_a_later_operand_of_or_is_no_certain_key_error(tmp_path: Path) -> None:
    # on 12.0 `edge is None` holds first (the sibling table's .get() came back empty)
    found = _scan(
        tmp_path,
        {
            "eng/win.py": """
        MIN_SMS = {"sm_100a": 148, "sm_103a": 152}
        EDGES = {"sm_100a": {"a": 1}, "sm_103a": {"a": 2}}

        def rows_for(arch: str, key: str, rows: int, n_sms: int) -> int:
            edge = EDGES.get(arch, {}).get(key)
            if edge is None or n_sms >= MIN_SMS[arch]:
                return rows
            return max(rows, edge + 1)
    """,
        },
    )
    by_table = {f.symbol: (f.severity, f.extra["access"]) for f in found if f.rule == "table-missing-arch"}
    assert by_table["MIN_SMS"] == ("medium", "guarded")


def test_a_table_read_returned_to_the_caller_says_so_not_that_the_path_is_off(tmp_path: Path) -> None:
    """`return _CONFIGS.get(cap)`: a caller may autotune where the entry is missing (sglang kda.py);
    the finding says the miss goes back to the caller, not that a path is silently disabled."""
    found = _scan(
        tmp_path,
        {
            "eng/kda.py": """
        import torch

        _CONFIGS = {
            (9, 0): {"BK": 128, "num_warps": 8},
            (10, 3): {"BK": 64, "num_warps": 8},
        }


        def config(k):
            return _CONFIGS.get(torch.cuda.get_device_capability(k.device))
    """
        },
    )
    assert [f.consequence for f in found] == [
        ".get() returns None on 12.0: returned to the caller, which decides what a missing entry means "
        "(eng/kda.py:10)"
    ]


def test_a_table_of_one_gpu_s_overrides_is_tuning_its_kin_go_without(tmp_path: Path) -> None:
    """`{"sm_103a": ...}` is B300's override, which B200 goes without as 12.0 does: low, tuning;
    a table of the whole family (`"sm100f"`) or of two generations is no such override."""
    text = """
    import torch

    ROUTE_BODIES = {KEYS}


    def body(n):
        major, minor = torch.cuda.get_device_capability()
        return ROUTE_BODIES.get(f"sm_{major}{minor}a", {}).get(n, "shared")
    """
    one = _scan(tmp_path / "one", {"eng/routes.py": text.replace("{KEYS}", '{"sm_103a": {1: "wide"}}')})
    assert [(f.rule, f.severity, f.extra.get("tuning")) for f in one] == [("table-missing-arch", "low", True)]
    assert "a per-GPU override: 10.0 goes without an entry as 12.0 does" in one[0].consequence
    two = text.replace("{KEYS}", '{"sm_90a": {1: "narrow"}, "sm_103a": {1: "wide"}}')
    assert [f.severity for f in _scan(tmp_path / "two", {"eng/routes.py": two})] == ["medium"]


def test_a_table_of_another_generation_s_own_chip_is_its_special_case(tmp_path: Path) -> None:
    """`{(11, 0): "sm_110a"}` (a Thor-only backend) and `{(9, 0): "sm_90a"}` (Hopper's) lack every
    datacenter Blackwell GPU as they lack 12.0: low, that chip's special case. Not when a 10.x GPU
    is keyed, nor when the read raises KeyError (a crash is reached whoever else lacks the entry),
    nor for a target older than Blackwell (low there for its own reason), nor for a table of the
    target's own generation, nor where a newer generation is keyed."""
    text = """
    import torch

    ARCH_BY_CAPABILITY = {KEYS}


    def arch():
        cap = torch.cuda.get_device_capability()
        if cap not in ARCH_BY_CAPABILITY:
            return None
        return ARCH_BY_CAPABILITY[cap]
    """

    def judged(name: str, keys: str, target: str = "12.0") -> list[tuple[str, bool]]:
        found = _scan(tmp_path / name, {"eng/jit.py": text.replace("{KEYS}", keys)}, target)
        tables = [f for f in found if f.rule == "table-missing-arch"]
        return [(f.severity, "a special case of" in f.consequence) for f in tables]

    assert judged("thor", '{(11, 0): "sm_110a"}') == [("low", True)]
    assert judged("hopper", '{(9, 0): "sm_90a"}') == [("low", True)]
    assert judged("hopper10", '{(9, 0): "sm_90a"}', "10.3") == [("low", True)]
    assert judged("with10", '{(9, 0): "sm_90a", (10, 0): "sm_100a"}') == [("medium", False)]
    assert judged("spark", '{(12, 1): "sm_121a"}') == [("medium", False)]
    assert judged("ada", '{(9, 0): "sm_90a"}', "8.9") == [("low", False)]  # written for newer GPUs
    # sglang 0.5.23 `_PINNED = {(9, 0): ..., (12, 0): ..., (12, 1): ...}` read on a B200 or a Thor: a
    # newer generation is keyed, so 10.x going without it is the target itself, no special case
    newer = '{(9, 0): "a", (12, 0): "b", (12, 1): "b"}'
    assert judged("b200", newer, "10.0") == judged("thor-newer", newer, "11.0") == [("medium", False)]
    crash = """
    import torch

    ARCH_BY_CAPABILITY = {(9, 0): "sm_90a"}


    def arch():
        major, minor = torch.cuda.get_device_capability()
        return ARCH_BY_CAPABILITY[(major, minor)]
    """
    found = _scan(tmp_path / "crash", {"eng/jit.py": crash})
    assert [f.severity for f in found if f.rule == "table-missing-arch"] == ["high"]


_ALLREDUCE = """
import torch

_MiB = 1024 * 1024
_FUSION_MAX_SIZE = {{90: {{2: 64 * _MiB, 4: 2 * _MiB}}, 100: {{2: 64 * _MiB, 4: 32 * _MiB}}}}
_ONE_SHOT_MAX_SIZE = {{90: {{2: 32 * _MiB, 4: 2 * _MiB}}, 100: {{2: 32 * _MiB, 4: 4 * _MiB}}}}


class FusedAllReduce:
    def __init__(self, world_size):
        major, minor = torch.cuda.get_device_capability()
        cc = major * 10 + minor
        self._max_size = _FUSION_MAX_SIZE.get(cc, {{}}).get(world_size, 0)
        self._one_shot_max_size = _ONE_SHOT_MAX_SIZE.get(cc, {{}}).get(world_size, 0)

    def is_available(self):
        return self._max_size > 0

    def all_reduce(self, x):
        if x.nbytes > self._max_size:
            return False
        return fused(x, {use}=x.nbytes <= self._one_shot_max_size)
"""


def test_a_table_whose_value_only_picks_a_variant_of_a_call_is_tuning(tmp_path: Path) -> None:
    """lmdeploy 0.17/0.18's `_ONE_SHOT_MAX_SIZE`, read into `use_oneshot=nbytes <= self._one_shot_max_size`:
    no entry means two-shot always, which runs; `_FUSION_MAX_SIZE` beside it turns the path off."""
    found = _tables(_scan(tmp_path, {"eng/allreduce.py": _ALLREDUCE.format(use="use_oneshot")}))
    assert [(f[1], f[3]) for f in found] == [("medium", 4), ("low", 5)]


def test_the_same_value_handed_on_as_a_size_is_no_variant(tmp_path: Path) -> None:
    found = _tables(_scan(tmp_path, {"eng/allreduce.py": _ALLREDUCE.format(use="max_bytes")}))
    assert [(f[1], f[3]) for f in found] == [("medium", 4), ("medium", 5)]
