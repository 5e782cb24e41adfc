"""Evidence read around a decision: the names of the function and class it sits in, and what the
module itself imports, states or is named for, for any decision in it (not only refusals)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_CLASS = """
import torch


class {name}:
    @staticmethod
    def block_sizes(quantized):
        if quantized and torch.cuda.get_device_capability()[0] == 10:
            return [64]
        return [16, 32, 64]
"""


def test_a_kernel_family_in_the_enclosing_class_name_is_evidence(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _CLASS.format(name="FlashMLASparseBackend")})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/backend.py", 7)]
    assert found[0].extra["evidence"] == "the name FlashMLASparseBackend"


def test_an_arch_number_in_a_name_says_which_arch_not_what_it_needs(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _CLASS.format(name="TinyGemmSm100Backend")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/backend.py", 7)]


def test_a_plain_name_gives_no_evidence(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _CLASS.format(name="PagedBackend")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/backend.py", 7)]


def test_what_the_module_imports_explains_a_decision_that_is_no_refusal(tmp_path: Path) -> None:
    body = """
    import torch
    from cutlass.cute.nvgpu import tcgen05


    def blocker(device):
        if torch.cuda.get_device_capability(device) not in ((10, 0), (10, 3)):
            return f"device capability {torch.cuda.get_device_capability(device)}"
        return None
    """
    found = _scan(tmp_path, {"eng/kern.py": body})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kern.py", 6)]
    assert found[0].extra["evidence"] == "'tcgen05' imported at line 2"


_LAYOUT = """
{doc}
import torch


def layouts():
    cap = torch.cuda.get_device_capability()
    if cap[0] == 10:
        # {comment}
        return ("HND",)
    return ("NHD", "HND")
"""


def test_a_comment_in_the_arm_naming_a_kernel_family_is_evidence(tmp_path: Path) -> None:
    text = _LAYOUT.format(doc="", comment="The trtllm-gen kernels read head-major blocks.")
    found = _scan(tmp_path, {"eng/layouts.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/layouts.py", 6)]
    assert found[0].extra["evidence"] == "'trtllm-gen' (line 7) in a comment"


def test_a_comment_that_denies_the_family_is_no_evidence(tmp_path: Path) -> None:
    text = _LAYOUT.format(doc="", comment="Plain CUDA, not the trtllm-gen kernels.")
    found = _scan(tmp_path, {"eng/layouts.py": text})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/layouts.py", 6)]


def test_a_module_docstring_naming_a_kernel_family_is_no_need_of_the_module(tmp_path: Path) -> None:
    # an interface to FA2, FA3 and FA4 names them all: none is what each of its decisions needs
    text = _LAYOUT.format(doc='"""Dispatch to FA2, FA3 or FA4."""', comment="head-major blocks")
    found = _scan(tmp_path, {"eng/layouts.py": text})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/layouts.py", 7)]


_SUPPORT = """
import torch


class Kernel:
    @classmethod
    def is_supported(cls):
        if torch.cuda.get_device_capability()[0] != {major}:
            return False, "{message}"
        return True, None
"""


def test_a_refusal_naming_the_archs_it_requires_is_an_expected_exclusion(tmp_path: Path) -> None:
    text = _SUPPORT.format(major=10, message="requires sm_100/sm_103")
    found = _scan(tmp_path, {"eng/kern.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kern.py", 7)]
    assert found[0].extra["evidence"] == "the refusal naming 10.0, 10.3 as what it requires"
    assert "needs tcgen05" in found[0].consequence


def test_a_refusal_naming_hopper_implies_wgmma(tmp_path: Path) -> None:
    text = _SUPPORT.format(major=9, message="requires compute capability of 90 (Hopper)")
    found = _scan(tmp_path, {"eng/kern.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kern.py", 7)]
    assert "needs wgmma" in found[0].consequence


def test_a_refusal_that_names_the_target_or_no_arch_stays_a_loss(tmp_path: Path) -> None:
    for message in ("requires sm_10x; sm_120 is not supported", "requires a Blackwell GPU"):
        found = _scan(tmp_path, {"eng/kern.py": _SUPPORT.format(major=10, message=message)})
        assert _brief(found) == [("gate-excludes-arch", "medium", "eng/kern.py", 7)], message


def test_a_raise_naming_the_archs_it_requires_is_expected_too(tmp_path: Path) -> None:
    # the engine's own words name what the path is written for, as a returned refusal's do
    text = (
        _SUPPORT.format(major=10, message="requires sm_100/sm_103")
        .replace('return False, "requires', 'raise RuntimeError("requires')
        .replace('sm_103"', 'sm_103")')
    )
    found = _scan(tmp_path, {"eng/kern.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kern.py", 7)]


def test_a_refusal_naming_hopper_and_blackwell_together_implies_a_kernel_per_generation(
    tmp_path: Path,
) -> None:
    # each named arch has an MMA generation of its own (wgmma, tcgen05) and 12.0 neither: over 57
    # trees every refusal of this shape that moved was judged expected (vLLM's FA4 gate, sglang's
    # skip-softmax, cuDNN flex attention); a collective or a path only validated there stays medium
    text = _SUPPORT.format(major=10, message="requires SM90 or SM100")
    found = _scan(tmp_path, {"eng/kern.py": text})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kern.py", 7)]
    assert "needs tcgen05 or wgmma" in found[0].consequence


def test_every_arch_a_refusal_s_sentence_names_counts(tmp_path: Path) -> None:
    text = (
        _SUPPORT.format(major=10, message="requires Hopper SM90 or Blackwell SM100/SM103")
        .replace('return False, "requires', 'raise RuntimeError("requires')
        .replace('Blackwell SM100/SM103"', 'Blackwell "\n                f"SM100/SM103; found {cls}")')
    )
    # the archs of the whole sentence, split over an f-string, are named: 9.0 with 10.x, each with
    # an MMA generation 12.0 lacks
    (found,) = _scan(tmp_path, {"eng/kern.py": text})
    assert found.severity == "low"
    assert "the refusal naming 9.0, 10.0, 10.3 as what it requires" in found.consequence


def test_on_a_thor_a_refusal_names_a_library_s_sm100_build_not_a_cute_dsl_kernel(tmp_path: Path) -> None:
    """11.0 has tcgen05: "requires SM100 or SM103" is no need it lacks, unless the words name a
    library built per family (FlashInfer's KDA prefill ships sm_103a PTX; sglang 0.5.23, judged
    expected on 11.0); the engine's own CuTe-DSL kernel, compiled for the GPU it runs on, stays a
    loss (judged a gap there)."""
    library = _SUPPORT.format(major=10, message="FlashInfer KDA prefill requires SM100 or SM103")
    (found,) = _scan(tmp_path / "flashinfer", {"eng/kern.py": library}, arch="11.0")
    assert found.severity == "low"
    assert "needs code built for the SM100 family" in found.consequence
    own = _SUPPORT.format(major=10, message="CuTe DSL dual GEMM requires SM100 or SM103")
    assert [f.severity for f in _scan(tmp_path / "cute", {"eng/kern.py": own}, arch="11.0")] == ["medium"]
    # on 12.0 both name tcgen05, as before
    assert [f.severity for f in _scan(tmp_path / "rtx", {"eng/kern.py": library})] == ["low"]
