"""Backends picked by name: what the code registered under the name runs (judging.named)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_ARGS = """
    import torch

    def is_sm100():
        return torch.cuda.get_device_capability()[0] == 10

    def defaults(cfg):
        if is_sm100() and cfg.attention_backend is None:
            cfg.attention_backend = "fastmla"
        return cfg
"""

_REGISTRY = """
    BACKENDS = {}

    def register_attention_backend(name):
        def decorator(fn):
            BACKENDS[name] = fn
            return fn

        return decorator

    @register_attention_backend("fastmla")
    def create_fastmla_backend(runner):
        from eng.fastmla_backend import FastMLABackend

        return FastMLABackend(runner)
"""


def _backend(code: str) -> str:
    return f'''
    """Attention backend for FastMLA kernels."""

    import fastlib

    class FastMLABackend:
        def forward(self, q):
{code}
    '''


def test_a_default_naming_a_registered_trtllm_gen_backend_is_expected(tmp_path: Path) -> None:
    body = (
        "            # the block constraint of fastlib's trtllm_gen MLA kernels\n"
        "            return fastlib.mla(q)"
    )
    found = _scan(
        tmp_path,
        {"eng/args.py": _ARGS, "eng/registry.py": _REGISTRY, "eng/fastmla_backend.py": _backend(body)},
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/args.py", 7)]
    assert "trtllm_gen" in found[0].extra["evidence"]
    assert "registered as 'fastmla'" in found[0].extra["evidence"]


def test_a_registered_backend_that_names_the_target_s_arch_keeps_the_gap(tmp_path: Path) -> None:
    body = "            # trtllm_gen kernels on SM100, XQA on SM120\n            return fastlib.mla(q)"
    found = _scan(
        tmp_path,
        {"eng/args.py": _ARGS, "eng/registry.py": _REGISTRY, "eng/fastmla_backend.py": _backend(body)},
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/args.py", 7)]


def test_a_registered_backend_spelling_no_kernel_family_keeps_the_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/args.py": _ARGS,
            "eng/registry.py": _REGISTRY,
            "eng/fastmla_backend.py": _backend("            return fastlib.mla(q)"),
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/args.py", 7)]


_RESOLVER = """
    import torch

    def is_sm100():
        return torch.cuda.get_device_capability()[0] == 10

    def get_default_attn_backend(has_lib):
        if is_sm100():
            return "fastmla"
        else:
{other}
"""


def test_a_default_resolver_giving_the_target_only_a_fallback_is_high(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/defaults.py": _RESOLVER.format(other='            return "triton"')})
    assert _brief(found) == [("gate-excludes-arch", "high", "eng/defaults.py", 7)]
    assert "what get_default_attn_backend() answers" in found[0].consequence


def test_a_default_resolver_whose_fallback_may_be_a_named_backend_is_a_choice(tmp_path: Path) -> None:
    other = '            if has_lib:\n                return "fastlib"\n            return "triton"'
    found = _scan(tmp_path, {"eng/defaults.py": _RESOLVER.format(other=other)})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/defaults.py", 7)]
    assert "12.0 gets 'fastlib' of its own" in found[0].consequence


_OVERRIDE = """
    import torch

    def is_sm100():
        return torch.cuda.get_device_capability()[0] == 10

    def overrides(cfg):
        if is_sm100() and cfg.attention_backend is None:
            return {"attention_backend": "fastlib"}
        return {}
"""


def test_an_override_giving_the_sibling_what_the_target_s_default_gives_is_no_loss(tmp_path: Path) -> None:
    other = '            if has_lib:\n                return "fastlib"\n            return "triton"'
    found = _scan(tmp_path, {"eng/defaults.py": _RESOLVER.format(other=other), "eng/model.py": _OVERRIDE})
    model = [f for f in found if f.path == "eng/model.py"]
    assert _brief(model) == [("gate-excludes-arch", "low", "eng/model.py", 7)]
    assert model[0].consequence.startswith("not a loss: get_default_attn_backend()")


def test_an_override_the_target_s_default_never_gives_stays_a_gap(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {"eng/defaults.py": _RESOLVER.format(other='            return "triton"'), "eng/model.py": _OVERRIDE},
    )
    model = [f for f in found if f.path == "eng/model.py"]
    assert _brief(model) == [("gate-excludes-arch", "medium", "eng/model.py", 7)]


_FUSION = """
    import torch

    def is_sm100():
        return torch.cuda.get_device_capability()[0] == 10

    def fusion(cfg):
        from eng.fused_ar import SUPPORTED_TP_SIZES

        if not (is_sm100() and cfg.tp_size in SUPPORTED_TP_SIZES):
            return {}
        return {"allreduce_fusion": "on"}
"""


def _fused_ar(comment: str) -> str:
    return f'''
    """Access to the fused allreduce workspace."""

    SUPPORTED_TP_SIZES = (2, 4, 8)

    def workspace(group):
        {comment}
        return group
    '''


def test_a_guard_reading_a_kernel_module_s_limits_is_judged_by_that_module(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {"eng/hook.py": _FUSION, "eng/fused_ar.py": _fused_ar("# the workspace is NVLS memory (multimem)")},
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/hook.py", 9)]
    assert "whose limits the test reads" in found[0].extra["evidence"]


def test_a_guard_reading_limits_of_a_module_needing_nothing_stays_medium(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/hook.py": _FUSION, "eng/fused_ar.py": _fused_ar("# plain CUDA copies")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/hook.py", 9)]


def test_a_named_value_of_the_target_s_own_beside_a_logged_sibling_pick_is_a_choice(tmp_path: Path) -> None:
    code = """
        import logging
        import torch

        logger = logging.getLogger(__name__)

        def moe_defaults(overrides):
            if torch.cuda.get_device_capability() == (9, 0):
                overrides["moe_runner_backend"] = "marlin"
                logger.info("Use marlin on SM90")
            else:
                overrides["moe_runner_backend"] = "fastlib_cutlass"
            return overrides
    """
    found = _scan(tmp_path, {"eng/moe.py": code})
    assert [(f.severity, f.extra.get("tuning")) for f in found] == [("low", True)]
    assert all("9.0 gets 'marlin'" in f.consequence for f in found)


_FA3_REGISTRY = """
    import torch
""" + _REGISTRY.split("    @register_attention_backend")[0].rstrip("\n") + """

    @register_attention_backend("fa3")
    def create_flashattention_v3_backend(runner):
        major, minor = torch.cuda.get_device_capability()
        assert major == 8 or major == 9, "FlashAttention v3 Backend requires SM>=80 and SM<=90."
        from eng.fa3_backend import FlashAttentionBackend

        return FlashAttentionBackend(runner)
"""

_FA3_DEFAULT = """
    import torch

    def overrides(cfg):
        if torch.cuda.get_device_capability()[0] >= 8:
            cfg.attention_backend = "fa3"
        else:
            cfg.attention_backend = "triton"
        return cfg
"""


def test_a_picked_backend_whose_registered_factory_refuses_the_target_says_where(tmp_path: Path) -> None:
    """exaone/olmo2 in sglang: `device_sm >= 80` picks 'fa3' for 12.0; the function registered as
    'fa3' asserts major 8 or 9. The finding names that assert, the engine's own failure point."""
    found = _scan(tmp_path, {"eng/registry.py": _FA3_REGISTRY, "eng/model_overrides.py": _FA3_DEFAULT})
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert _brief(admits) == [("gate-admits-unsupported", "high", "eng/model_overrides.py", 4)]
    assert (
        "the code registered as 'fa3' (eng/registry.py:15) fails the assert "
        "'FlashAttention v3 Backend requires SM>=80 and SM<=90.' on 12.0"
    ) in admits[0].consequence


def test_a_picked_backend_whose_registered_factory_lets_the_target_in_is_no_gap(tmp_path: Path) -> None:
    """The same pick read on an L40S: the 'fa3' factory's own assert admits major 8 (the fork's
    SM80 kernels), the engine's word that the backend runs there, whatever 'fa3' upstream needs."""
    tree = {"eng/registry.py": _FA3_REGISTRY, "eng/model_overrides.py": _FA3_DEFAULT}
    found = _scan(tmp_path / "ada", tree, arch="8.9")
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []
    assert [f.rule for f in _scan(tmp_path / "rtx", tree, arch="12.0")].count("gate-admits-unsupported") == 1
