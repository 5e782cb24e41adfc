"""A sibling's fix-up of its own generic default (judging.fixups), and a branch that forces a
setting because its kernel "only supports" it (judging.outcomes): neither is a path the target
loses."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_RESOLVER = """
import torch


def _on_blackwell_dc():
    return torch.cuda.get_device_capability()[0] == 10


def get_default_backend(cfg):
    if _on_blackwell_dc():
        return "fast"
    return "portable"
"""

_FIXUP = """
from eng.defaults import _on_blackwell_dc, get_default_backend


def hybrid_overrides(cfg):
    if _on_blackwell_dc() and cfg.backend is None:
        backend = get_default_backend(cfg)
        if backend == "fast" and cfg.page_size == 1:
            return {"backend": "triton"}
    return {}
"""

_FORCE = """
import logging

import torch

logger = logging.getLogger(__name__)


def page_constraint(cfg):
    if cfg.backend == "fa4" and torch.cuda.get_device_capability()[0] == 10:
        logger.warning(f"FA4 backend only supports page size 128, changing {cfg.page_size} to 128.")
        return {"page_size": 128}
    return {}
"""


def test_a_fix_up_of_the_sibling_s_generic_default_is_low(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/defaults.py": _RESOLVER, "eng/hybrid.py": _FIXUP})
    fixup = [f for f in found if f.path == "eng/hybrid.py"]
    assert _brief(fixup) == [("gate-excludes-arch", "low", "eng/hybrid.py", 5)]
    assert "get_default_backend()" in fixup[0].extra["evidence"]


def test_forcing_what_a_kernel_only_supports_is_a_restriction(tmp_path: Path) -> None:
    assert _scan(tmp_path, {"eng/pages.py": _FORCE}) == []


_TWO_IMPLEMENTATIONS = """
import torch


def quantize_backend():
    return "cute-dsl" if torch.cuda.get_device_capability()[0] == 10 else "cuda"


def attention_backend():
    return "fast_kernel" if torch.cuda.get_device_capability()[0] == 10 else "triton"


def gemm_path():
    return "fast" if torch.cuda.get_device_capability()[0] == 10 else "slow"
"""


def test_a_named_implementation_of_the_target_s_own_is_a_choice_not_a_loss(tmp_path: Path) -> None:
    # "cuda" is an implementation of the target's own: low; "triton" is the portable fallback
    # the sibling's fast path leaves it on, and "slow" says it is the lesser path: the loss stands
    found = _scan(tmp_path, {"eng/backends.py": _TWO_IMPLEMENTATIONS})
    assert _brief(found) == [
        ("gate-excludes-arch", "low", "eng/backends.py", 5),
        ("gate-excludes-arch", "medium", "eng/backends.py", 9),
        ("gate-excludes-arch", "medium", "eng/backends.py", 13),
    ]
    assert found[0].extra["tuning"] is True


_DEFAULT_ATTN = """
import torch


def is_sm100():
    return torch.cuda.get_device_capability()[0] == 10


def get_default_attn_backend(cfg, use_mla):
    if not use_mla:
        if is_sm100():
            return "gen_mha"
        else:
            return "{other}"
    return "triton"
"""

_MODEL_OVERRIDE = """
from eng.defaults import is_sm100


def is_attention_backend_not_set(cfg):
    return cfg.attention_backend is None


def model_overrides(cfg):
    overrides = {}
    if is_attention_backend_not_set(cfg):
        if cfg.spec is not None:
            overrides["page_size"] = 64
        elif is_sm100():
            overrides["attention_backend"] = "gen_mha"
    return overrides
"""


def test_an_unset_setting_the_resolver_gives_the_target_its_own_value_is_a_choice(tmp_path: Path) -> None:
    # left unset, the target gets the resolver's own named answer ("flashinfer") beside the
    # sibling's override: a choice between implementations, low; a portable fallback stays medium
    for other, severity in (("flashinfer", "low"), ("triton", "medium")):
        root = tmp_path / other
        found = _scan(
            root,
            {"eng/defaults.py": _DEFAULT_ATTN.replace("{other}", other), "eng/model.py": _MODEL_OVERRIDE},
        )
        assert [b for b in _brief(found) if b[2] == "eng/model.py"] == [
            ("gate-excludes-arch", severity, "eng/model.py", 13)
        ], other


_PRIOR = """
import torch


def is_sm100():
    return torch.cuda.get_device_capability()[0] == 10


def get_fallback_backend():
    return "flashinfer"


def resolve(cfg):
    draft = cfg.draft
    if draft == "gen":
        fallback_backend = get_fallback_backend()
        # keep the fast path where it is
        if is_sm100():
            fallback_backend = "fa4"
        draft = fallback_backend
    return draft
"""


def test_overriding_a_resolver_s_answer_given_just_before_is_the_sibling_s_preference(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/spec.py": _PRIOR})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/spec.py", 17)]
    assert "get_fallback_backend()" in found[0].extra["evidence"]
    # the same override of a value that no resolver gave: the loss stands
    other = _scan(
        tmp_path / "b", {"eng/spec.py": _PRIOR.replace("get_fallback_backend()\n", "cfg.backend\n", 1)}
    )
    assert _brief(other) == [("gate-excludes-arch", "medium", "eng/spec.py", 17)]
