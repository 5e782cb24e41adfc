"""A backend a sibling gets by name is judged by the engine's own check of that name."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_OVERRIDE = """
import torch


def default_backend():
    if torch.cuda.get_device_capability()[0] == 10:
        return {"attention_backend": "fast_mha"}
    return {}
"""

_CHECK = """
import torch


def check(backend):
    major = torch.cuda.get_device_capability()[0]
    if backend == "fast_mha" and not ({admitted}):
        raise ValueError("fast_mha needs another GPU")
"""


def test_a_name_the_engine_refuses_on_the_target_is_expected(tmp_path: Path) -> None:
    found = _scan(
        tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": _CHECK.format(admitted="major == 10")}
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/override.py", 5)]
    assert found[0].extra["evidence"].startswith("the engine's own check at eng/check.py:6")
    assert "refused this path by the engine itself" in found[0].consequence


def test_a_name_the_engine_accepts_on_the_target_stays_a_loss(tmp_path: Path) -> None:
    admitted = "major == 9 or major == 10 or major == 12"
    found = _scan(tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": _CHECK.format(admitted=admitted)})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/override.py", 5)]
    assert found[0].extra["evidence"] == "the engine's own check at eng/check.py:6 lets 12.0 through"


def test_a_check_of_another_name_says_nothing(tmp_path: Path) -> None:
    other = _CHECK.format(admitted="major == 10").replace('"fast_mha"', '"slow_mha"')
    found = _scan(tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": other})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/override.py", 5)]
    assert "evidence" not in found[0].extra


_BY_METHOD = """
import enum
import torch


def is_blackwell():
    return torch.cuda.get_device_capability()[0] == 10


class GemmBackend(enum.Enum):
    AUTO = "auto"
    FAST = "fastgemm"

    def is_fastgemm(self):
        return self == GemmBackend.FAST


def init(setting, strict):
    backend_str = setting
    if backend_str == "auto" and is_blackwell():
        backend_str = (
            "plain" if strict.deterministic_settings.enable_deterministic_inference else "fastgemm"
        )
    backend = GemmBackend(backend_str)
    if backend.is_fastgemm():
        if not is_blackwell():
            raise ValueError(f"--gemm-backend {{backend.value}} requires {archs}")
"""


def test_a_name_asked_by_the_settings_own_method_is_checked_there(tmp_path: Path) -> None:
    # `backend.is_fastgemm()` checks the name "fastgemm" the default picks (one of two, by a long
    # condition), and refuses it on the target in words led by the setting's value
    found = _scan(tmp_path, {"eng/gemm.py": _BY_METHOD.format(archs="SM100/SM103 (Blackwell)")})
    default = [f for f in found if f.line == 19]
    assert [(f.severity, f.extra["evidence"][:37]) for f in default] == [
        ("low", "the engine's own check at eng/gemm.py")
    ]
    assert "'plain' or 'fastgemm'" in default[0].message


def test_a_method_asked_under_not_checks_no_name(tmp_path: Path) -> None:
    src = _BY_METHOD.format(archs="SM100/SM103 (Blackwell)").replace(
        "if backend.is_fastgemm():", "if not backend.is_fastgemm():"
    )
    found = _scan(tmp_path, {"eng/gemm.py": src})
    assert [f.severity for f in found if f.line == 19] == ["medium"]


def test_a_check_of_another_flag_s_value_of_the_same_name_admits_nothing() -> None:
    from capgap.judging.validations import _same_setting

    message = "raises RuntimeError 'CUTLASS block FP8 requested via --fp8-gemm-backend=cutlass, but ...'"
    assert not _same_setting("fmha_backend", message)
    assert _same_setting("fp8_gemm_backend", message)
    assert _same_setting("", message)  # an arm that assigns no named setting: unknown
    assert _same_setting("fmha_backend", "raises ValueError 'cutlass needs SM90'")  # no flag named


_ENUM_DEFAULT = """
import enum
import torch


class Backend(enum.Enum):
    FAST_ATTN = "fast"
    TORCH_SDPA = "sdpa"


def pick_backend(selected, head_size):
    major, _ = torch.cuda.get_device_capability()
    if selected is not None:
        backend_upper = selected.upper()
        if backend_upper == "FAST_ATTN":
            fast_supported = major == 10
            if not fast_supported:
                raise ValueError("FAST_ATTN attention backend requires a datacenter Blackwell GPU.")
        return Backend[backend_upper]
    fast_default_ok = major == 10 and head_size == 128
    if fast_default_ok:
        return Backend.FAST_ATTN
    return Backend.TORCH_SDPA
"""


def test_an_enum_member_is_judged_by_the_engine_s_check_of_its_name(tmp_path: Path) -> None:
    # vllm-omni 0.30.0 platforms/cuda/platform.py:324: the default TRTLLM_ATTN for 10.x, which the
    # explicit selection of "TRTLLM_ATTN" refuses on 12.0 a few lines above
    found = _scan(tmp_path, {"eng/platform.py": _ENUM_DEFAULT})
    default = [f for f in found if f.line == 20]
    assert _brief(default) == [("gate-excludes-arch", "low", "eng/platform.py", 20)]
    assert "refused this path by the engine itself" in default[0].consequence


def test_an_enum_member_the_engine_lets_the_target_have_stays_a_loss(tmp_path: Path) -> None:
    text = _ENUM_DEFAULT.replace("fast_supported = major == 10", "fast_supported = major in (10, 12)")
    found = _scan(tmp_path, {"eng/platform.py": text})
    assert _brief([f for f in found if f.line == 20]) == [
        ("gate-excludes-arch", "medium", "eng/platform.py", 20)
    ]
