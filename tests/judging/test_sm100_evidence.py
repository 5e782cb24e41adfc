"""Evidence that a family-100 path needs what 12.0 lacks, read where the path is: the branches that
ask a predicate or test a flag, a kernel module with no decision of its own, the class a conditional
expression sits in; numbers each arch computes; tests and build lists inside a module whose path
names its arch."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_KERNEL = """
    '''A small fused kernel.'''
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import tcgen05

    @cute.kernel
    def _kernel(x):
        pass

    FUSED = object()
    """


def test_a_predicate_is_judged_with_the_branch_that_asks_it(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/__init__.py": "",
            "eng/fused.py": _KERNEL,
            "eng/proj.py": """
        from eng.platform import current_platform

        def _can_fuse(layer) -> bool:
            return current_platform.is_device_capability_family(100) and layer.ok

        def project(layer, x):
            if x.shape[0] <= 16 and _can_fuse(layer):
                from eng.fused import FUSED

                return FUSED(x)
            return layer(x)
    """,
        },
    )
    gate = [f for f in found if f.path == "eng/proj.py"]
    assert [(f.severity, f.line) for f in gate] == [("low", 3)]
    assert "tcgen05" in gate[0].consequence


def test_a_flag_is_judged_with_the_methods_that_test_it(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/__init__.py": "",
            "eng/fused.py": _KERNEL,
            "eng/gate.py": """
        from eng.platform import current_platform

        class Gate:
            def __init__(self, fp32: bool) -> None:
                self.allow_fused = fp32 and current_platform.is_device_capability_family(100)

            def forward(self, x):
                if self.allow_fused and x.dtype == "bf16":
                    from eng.fused import FUSED

                    return FUSED(x)
                return x
    """,
        },
    )
    gate = [f for f in found if f.path == "eng/gate.py"]
    assert [(f.severity, f.line) for f in gate] == [("low", 5)]


def test_a_flag_whose_branches_run_portable_code_stays_a_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/gate.py": """
        import torch
        from eng.platform import current_platform

        class Gate:
            def __init__(self) -> None:
                self.allow_fast = current_platform.is_device_capability_family(100)

            def forward(self, x):
                if self.allow_fast:
                    return torch.ops.eng.fast_gemm(x)
                return x
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/gate.py", 6)]


def test_a_conditional_expression_is_read_with_the_class_it_sits_in(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/attn.py": """
        from eng.platform import current_platform

        class FlashMLAAttention:
            def heads(self) -> int:
                return (
                    self.n_heads
                    if current_platform.is_device_capability_family(90)
                    else self.padded_heads
                )
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "FlashMLAAttention" in found[0].consequence


def test_a_number_each_arch_computes_is_tuning(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/sizes.py": """
        import torch
        from eng.platform import current_platform

        _DEFAULT_MIN_BATCH = 16
        _ROWS = 1024

        def min_batch(rows: int) -> int:
            if not current_platform.is_device_capability((10, 3)):
                return _DEFAULT_MIN_BATCH
            return (_ROWS + rows - 1) // rows

        def ctas(max_m: int) -> int:
            return min(max_m, 7) if torch.cuda.get_device_capability()[0] == 10 else 0
    """,
        },
    )
    assert [f.severity for f in found if f.rule == "gate-excludes-arch"] == ["low", "low"]
    assert all("tuning only" in f.consequence for f in found)


def test_a_table_of_names_is_no_number(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plans.py": """
        from eng.platform import current_platform

        PROJECTIONS = {"qkv": (1, 2)}

        def plans(n: int):
            if current_platform.is_device_capability_family(100):
                return PROJECTIONS
            return None
    """,
        },
    )
    assert [f.severity for f in found] == ["medium"]


def test_a_test_inside_a_module_written_for_sm100_admits_nothing_it_runs(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/fmha_sm100/indexer.py": """
        import torch

        def _supports_tmem_load_red(arch) -> bool:
            return arch >= (10, 3)

        def scores(x):
            arch = torch.cuda.get_device_capability()
            use_tmem_load_red = _supports_tmem_load_red(arch)
            return x
    """,
        },
    )
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert admits and all(f.severity == "low" for f in admits)
    assert "written for" in admits[0].consequence


def test_a_gencode_list_in_a_module_written_for_sm100_is_expected(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/fmha_sm100/jit.py": """
        def flags():
            return [
                "-O3",
                "-gencode=arch=compute_100a,code=sm_100a",
                "-gencode=arch=compute_103a,code=sm_103a",
            ]
    """,
        },
    )
    builds = [f for f in found if f.rule == "build-missing-arch"]
    assert [f.severity for f in builds] == ["low"]
    assert "module's path" in builds[0].consequence


def test_a_refusal_where_the_flag_is_off_names_what_the_path_requires(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/topk.py": """
        from eng.platform import current_platform

        class TopK:
            def __init__(self, backend: str) -> None:
                self.backend = backend
                self._has_select = current_platform.is_device_capability_family(100)

            def resolve(self) -> str:
                failures = []
                if self.backend == "select":
                    if not self._has_select:
                        failures.append("requires SM100a/SM103a (10.x device family)")
                if failures:
                    raise RuntimeError("; ".join(failures))
                return self.backend
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "'sm100a'" in found[0].consequence


def test_a_test_that_names_the_target_s_family_to_shut_it_out_is_deliberate(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/topk.py": """
        import torch
        from eng.platform import current_platform

        def topk(logits):
            use_cooperative = (
                logits.shape[0] <= 64
                and current_platform.has_device_capability(90)
                and not current_platform.is_device_capability_family(120)
            )
            return torch.ops.eng.topk(logits, cooperative=use_cooperative)
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "deliberate exclusion" in found[0].consequence


def test_a_flag_set_apart_that_shuts_the_family_out_is_deliberate_where_it_is_tested(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/dsv4.py": """
        from eng.platform import current_platform

        def prepare(metadata, num_qo_tokens, force):
            use_sparse_prefill = not current_platform.is_device_capability_family(120) and (
                num_qo_tokens > 4096 or force
            )
            if use_sparse_prefill:
                metadata.cache = build_sparse_prefill_chunk_cache(num_qo_tokens)
            metadata.done = True
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "deliberate exclusion" in found[0].consequence


def test_a_test_that_is_only_the_target_s_own_helper_negated_is_deliberate(tmp_path: Path) -> None:
    """aphrodite's DSA indexer: `elif not use_sm120_dsa_indexer(): kv = quant_view(kv)`, where the
    helper, in another module, asks for family 120: 12.x keeps the raw view its own kernel reads.
    Before, only an operand of an `and` was read so."""
    helper = """
        from eng.platform import current_platform

        def use_sm120_dsa_indexer():
            return current_platform.is_cuda() and current_platform.is_device_capability_family(120)
    """
    layer = """
        from eng.sm120_indexer import use_sm120_dsa_indexer

        def decode(kv, quant_view):
            if not use_sm120_dsa_indexer():
                kv = quant_view(kv)
            return kv
    """
    found = _scan(tmp_path, {"eng/sm120_indexer.py": helper, "eng/layer.py": layer})
    assert [f.severity for f in found] == ["low"]
    assert "deliberate exclusion" in found[0].consequence


def test_a_list_of_the_other_generations_is_no_carve_out(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/topk.py": """
        import torch
        from eng.platform import current_platform

        def topk(logits):
            major = current_platform.get_device_capability()[0]
            use_cooperative = logits.shape[0] <= 64 and major in (9, 10, 11)
            return torch.ops.eng.topk(logits, cooperative=use_cooperative)
    """,
        },
    )
    assert [f.severity for f in found] == ["medium"]


def test_an_import_from_a_package_written_for_sm100_says_what_the_module_runs(tmp_path: Path) -> None:
    files = {
        "eng/decode.py": """
        from eng.platform import current_platform

        def supports_fast_decode(page_size: int) -> bool:
            return current_platform.is_device_capability_family(100) and page_size == 128

        def fast_decode(q, kv):
            from eng.third_party.fmha_sm100.api import decode

            return decode(q, kv)
    """,
    }
    found = _scan(tmp_path, files)
    assert [f.severity for f in found] == ["low"]
    assert "fmha_sm100" in found[0].consequence


def test_a_module_importing_one_variant_named_for_an_arch_is_no_sm100_module(tmp_path: Path) -> None:
    files = {
        "eng/decode.py": """
        from eng.platform import current_platform

        def supports_fast_decode(page_size: int) -> bool:
            return current_platform.is_device_capability_family(100) and page_size == 128

        def fast_decode(q, kv):
            from eng.kernels.flash_fwd_sm100 import decode

            return decode(q, kv)
    """,
    }
    found = _scan(tmp_path, files)
    assert [f.severity for f in found] == ["medium"]


def test_a_predicate_kept_in_an_attribute_is_judged_where_the_attribute_is_tested(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/__init__.py": "",
            "eng/fused.py": _KERNEL,
            "eng/model.py": """
        from eng.platform import current_platform

        def _own_kernels(cfg) -> bool:
            if not current_platform.is_device_capability_family(100):
                return False
            return cfg is None or not cfg.expert_parallel

        class Layer:
            def __init__(self, cfg) -> None:
                self.own_decode = _own_kernels(cfg)

            def forward(self, x):
                if self.own_decode:
                    from eng.fused import FUSED

                    return FUSED(x)
                return x
    """,
        },
    )
    gate = [f for f in found if f.path == "eng/model.py"]
    assert [(f.severity, f.line) for f in gate] == [("low", 4)]


def test_a_guard_whose_answer_is_asked_elsewhere_still_bounds_the_next_decision(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/backend.py": """
        from eng.platform import current_platform

        class Backend:
            @classmethod
            def supports_sink(cls) -> bool:
                if not current_platform.is_device_capability_family(100):
                    return False
                return cls.ok()

            @classmethod
            def layouts(cls):
                cap = current_platform.get_device_capability()
                if cap is not None and cap.major == 10:
                    return ("LBHNC",)
                return None

        def pick(b):
            if b.supports_sink():
                return b.layouts()
            return None
    """,
        },
    )
    assert 13 in [f.line for f in found]


def test_the_refusal_where_a_kept_answer_is_no_names_what_the_path_requires(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/kda.py": """
        import torch
        from eng.platform import current_platform

        def is_fused_prefill_supported(head_dim: int) -> bool:
            cap = current_platform.get_device_capability()
            return (cap.major, cap.minor) in ((10, 0), (10, 3)) and head_dim == 128

        def resolve_prefill_backend(backend: str, head_dim: int) -> str:
            supported = is_fused_prefill_supported(head_dim)
            if backend == "fused" and not supported:
                raise RuntimeError(
                    "The fused KDA prefill requires CUDA SM100 or SM103, "
                    "bfloat16 activations and head_dim=128."
                )
            return "fused" if supported else "triton"
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "SM100 or SM103" in found[0].consequence


def test_the_refusal_the_rest_of_the_test_reaches_names_what_the_path_requires(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/kda.py": """
        from eng.platform import current_platform

        def is_fused_decode_supported(head_dim: int) -> bool:
            return current_platform.is_device_capability_family(100) and head_dim == 128

        def resolve_decode_backend(backend: str, head_dim: int) -> str:
            fused_supported = is_fused_decode_supported(head_dim)
            if fused_supported and backend == "fused":
                return "fused"

            if backend == "fused":
                raise RuntimeError(
                    "The fused KDA decode requires CUDA SM100 family, head_dim=128."
                )
            return "triton"
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "SM100 family" in found[0].consequence


def test_a_comment_that_labels_the_path_with_its_arch_says_what_it_is_written_for(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/attn.py": """
        import torch

        def forward(q, k, fwd):
            # SM90 FA4 fp8-KV path: fp8 paged K/V dequantized in-kernel.
            fp8_kv_dequant = (
                k.dtype == torch.float8_e4m3fn
                and torch.cuda.get_device_capability()[0] == 9
            )
            return fwd(q, k, dequant=fp8_kv_dequant)
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "SM90 FA4 fp8-KV path" in found[0].consequence


def test_tables_named_tuned_beside_empty_ones_are_tuning(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/configs.py": """
        from eng.platform import current_platform

        _SM100F_TUNED_BS = {(4096, 128): 8}
        _SM100F_TUNED_SPLITK = {(4096, 128): (8, 2)}

        def _arch_tuned_configs():
            if current_platform.is_device_capability_family(100):
                return (_SM100F_TUNED_BS, _SM100F_TUNED_SPLITK)
            return ({}, {})
    """,
        },
    )
    assert [f.severity for f in found] == ["low"]
    assert "tuning only" in found[0].consequence


def test_a_comment_that_names_the_target_going_without_is_deliberate(tmp_path: Path) -> None:
    """aphrodite's FlashInfer Q dtype: "Architectures with only fa2 (e.g. SM89, SM120) cannot consume
    FP8 queries, so keep the model dtype for Q there" above `if is_device_capability(90) or
    family(100)`: the authors say what 12.0 goes without. Not a sentence that says it is still to
    come ("SM120 is not tuned yet")."""
    text = """
        from eng.platform import current_platform

        def q_dtype(cache_dtype, model_dtype):
            if cache_dtype.startswith("fp8"):
                # FP8-Q requires an fp8 tensor-core attention path.
                # Architectures with only fa2 (e.g. SM89, SM120) cannot consume FP8 queries,
                # so keep the model dtype for Q there.
                if (
                    current_platform.is_device_capability(90)
                    or current_platform.is_device_capability_family(100)
                ):
                    return cache_dtype
                return model_dtype
            return model_dtype
    """
    found = _scan(tmp_path / "said", {"eng/q.py": text})
    assert [f.severity for f in found] == ["low"]
    assert (
        "left out on purpose, the comment beside it says: 'SM89, SM120) cannot consume FP8"
        in found[0].consequence
    )
    assert found[0].extra["evidence"].startswith("the comment beside it")
    later = text.replace(
        "Architectures with only fa2 (e.g. SM89, SM120) cannot consume FP8 queries,\n"
        "                # so keep the model dtype for Q there.",
        "TODO: SM120 does not have tuned FP8 queries yet.",
    )
    found = _scan(tmp_path / "later", {"eng/q.py": later})
    assert [f.severity for f in found] == ["medium"]
