"""Sentences around a decision that say which archs its path is written for (judging.prose)."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import prose
from tests.judging.test_decisions import _brief, _scan

_GATED = '''
import torch


class ChunkPrefill:
    """{doc}"""

    def __init__(self):
        self.supports_prefill = False
        if torch.cuda.get_device_capability()[0] {test}:
            self.supports_prefill = True


def prefill(kernel, x):
    return kernel.run(x) if kernel.supports_prefill else x
'''


def _one(tmp_path: Path, doc: str, test: str = "== 10") -> list[tuple[str, str, str, int]]:
    return _brief(_scan(tmp_path, {"eng/kda.py": _GATED.format(doc=doc, test=test)}))


def test_a_docstring_that_says_the_path_is_for_sm100_only_is_evidence(tmp_path: Path) -> None:
    assert _one(tmp_path, "The chunk pipeline runs on SM10x only.") == [
        ("gate-excludes-arch", "low", "eng/kda.py", 9)
    ]


def test_a_sentence_that_only_tells_what_happens_on_an_arch_is_none(tmp_path: Path) -> None:
    assert _one(tmp_path, "On SM100 the chunk pipeline is used.") == [
        ("gate-excludes-arch", "medium", "eng/kda.py", 9)
    ]


def test_a_sentence_about_validation_or_tuning_is_none(tmp_path: Path) -> None:
    doc = "Only validated on SM100 so far."
    assert _one(tmp_path, doc) == [("gate-excludes-arch", "medium", "eng/kda.py", 9)]


def test_an_arch_and_newer_covers_the_target(tmp_path: Path) -> None:
    assert _one(tmp_path, "Requires SM100+.") == [("gate-excludes-arch", "medium", "eng/kda.py", 9)]


def test_a_sentence_about_sm100_says_nothing_when_hopper_gets_the_path_too(tmp_path: Path) -> None:
    found = _one(tmp_path, "The chunk pipeline requires SM100.", test="in (9, 10)")
    assert found == [("gate-excludes-arch", "medium", "eng/kda.py", 9)]


def test_opening_reads_the_docstring_and_leading_comments() -> None:
    lines = [
        "def f(",
        "    x,",
        "):  # a trailing note",
        "    # Built for sm100/sm103.",
        '    """Fused decode kernel for SM100 and SM103.',
        "",
        '    More words."""',
        "    return x",
    ]
    text, first = prose.opening(lines, 1)
    assert first == 4
    assert prose.arch_sentences(text) == [
        "Built for sm100/sm103.",
        "Fused decode kernel for SM100 and SM103.",
    ]


def test_said_takes_a_string_of_words_naming_an_arch() -> None:
    code = 'logger.info("Use trtllm_mla on SM100/SM103.")\nreturn {"backend": "sm100"}'
    assert prose.said(code) == "Use trtllm_mla on SM100/SM103."
    assert prose.said('return "sm100"') == ""


_PICK = """
import torch


def pick(q):
    # {comment}
    if torch.cuda.get_device_capability()[0] == 10:
        return cudnn_sdpa(q)
    return flash_attention(q)
"""


def test_a_measured_preference_for_the_sibling_is_tuning(tmp_path: Path) -> None:
    comment = "cuDNN SDPA is 1.3x faster than the FA4 kernels on sm_100."
    found = _scan(tmp_path, {"eng/pick.py": _PICK.format(comment=comment)})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/pick.py", 6)]
    assert found[0].extra["tuning"] is True
    assert "faster than" in found[0].extra["evidence"]


def test_a_preference_for_a_sibling_named_by_product_is_its_own(tmp_path: Path) -> None:
    # "B200" is 10.0 by name: the sentence speaks for the generation that gets the path
    comment = "On B200 cuDNN SDPA is faster for this head geometry."
    found = _scan(tmp_path, {"eng/pick.py": _PICK.format(comment=comment)})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/pick.py", 6)]
    assert "On B200 cuDNN SDPA is faster" in found[0].extra["evidence"]


def test_products_name_their_compute_capability() -> None:
    assert prose.named_archs("tuned on B200 and H100, not on GB300") == ({"10.0", "9.0", "10.3"}, set())


def test_a_preference_sentence_about_the_target_keeps_the_loss(tmp_path: Path) -> None:
    comment = "Not yet measured on SM120, where cuDNN SDPA may be faster too."
    found = _scan(tmp_path, {"eng/pick.py": _PICK.format(comment=comment)})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/pick.py", 6)]


def test_a_comment_saying_the_target_goes_its_own_way_is_no_loss(tmp_path: Path) -> None:
    body = """
    import torch


    def scales(k):
        # SM100 kernels expect amax / 448. SM120 uses a different kernel path where scales
        # already include this factor.
        if torch.cuda.get_device_capability()[0] == 10:
            k *= 6.0
        return k
    """
    found = _scan(tmp_path, {"eng/kv.py": body})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/kv.py", 7)]
    assert "goes its own way" in found[0].extra["evidence"]


def test_a_comment_above_the_branch_body_is_read(tmp_path: Path) -> None:
    body = """
    import torch


    def pick(q):
        if torch.cuda.get_device_capability()[0] == 10:
            # cuDNN SDPA is 1.3x faster than the FA4 kernels on sm_100.
            return cudnn_sdpa(q)
        return flash_attention(q)
    """
    found = _scan(tmp_path, {"eng/pick.py": body})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/pick.py", 5)]


def test_words_saying_the_target_s_outcome_was_tuned_on_its_generation_are_no_loss(tmp_path: Path) -> None:
    """vLLM 0.34 qsa.py: "This default table was tuned on GB300; sm_120 dispatches to
    _select_sm120_config instead": on a B200 the default it gets was tuned on its own generation
    (judged not-a-gap on 10.0); "not yet measured on SM120" keeps the loss (above)."""
    body = '''
    import torch


    def select(n):
        """This default table was tuned on GB300; sm_120 dispatches to its own table instead."""
        if torch.cuda.get_device_capability() == (12, 0):
            return select_sm120(n)
        return (32, 1, 1)
    '''
    found = _scan(tmp_path, {"eng/cfg.py": body}, arch="10.0")
    assert [(f.severity, "goes its own way" in f.extra.get("evidence", "")) for f in found] == [("low", True)]
