"""Needs the code's authors state in words: comments beside a table or decision, a module's
docstring and top-level comments, the text of a refusal.

Only instruction-level words count (tcgen05, TMEM, UMMA, wgmma, multimem, NVLS multicast): "SM100
only" says which arch, not why, and "mnnvl" in prose is mostly a backend's name. A mention under
a negation ("plain CUDA, no tcgen05") is no need, and TMA or cluster multicast is no NVLS multicast.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from capgap.judging.records import FileFacts
from capgap.reading.hintlines import holds_any

# and kernel families whose code the evidence table reads the same way (`trtllm_gen` in code):
# TRT-LLM-gen cubins are SM100-family tcgen05 kernels, FlashAttention-3 is Hopper's wgmma kernel
_STATED = re.compile(
    # ("tensor memory" is TMEM, the Tensor Memory Accelerator TMA; `cta_group::2` is tcgen05's 2-SM MMA)
    r"tcgen05|\bumma\b|\btmem|tensor[\s-]memory(?![\s-]accel)|\bcta_group\b|\bwgmma\b"
    r"|warp-?group(?:ed)?[ _-]mma|multimem|\bnvls\b|multicast"
    r"|\btrt-?llm[ _-]gen\b|\bfa3\b|flash-?attention[ -]?3\b|\bdeep[ _-]?gemm\b"
    r"|\bcvt\.rs\b",  # stochastic rounding: sm_100a/sm_103a only
    re.I,
)
_FAMILY = re.compile(r"trt|fa3|flash|deep", re.I)
_FEATURE = (
    ("tcgen05", ("tcgen05",)),
    ("umma", ("tcgen05",)),
    ("tmem", ("tcgen05",)),
    ("tensor", ("tcgen05",)),
    ("cta_group", ("tcgen05",)),
    ("wgmma", ("wgmma",)),
    ("warp", ("wgmma",)),
    ("multimem", ("nvls_multicast",)),
    ("nvls", ("nvls_multicast",)),
    ("multicast", ("nvls_multicast",)),
    ("trt", ("tcgen05",)),
    ("fa3", ("wgmma",)),
    ("flash", ("wgmma",)),
    ("deep", ("wgmma", "tcgen05")),  # DeepGEMM: Hopper's wgmma or Blackwell's tcgen05 kernels
    ("cvt", ("cvt_rs",)),
)
# A negation shortly before the mention, in the same clause: "no tcgen05", "without TMEM".
_NEGATED = re.compile(r"(?:\bno|\bnot|\bwithout|n't|\bnon|\bnor|\bneither|\bnever)\b[^.;:\n]{0,24}$", re.I)
_NOT_NVLS = re.compile(r"(?:\btma|cluster|cta)\W{0,3}(?:\w+\W{1,3}){0,1}$", re.I)
_BLOCK_LINES = 20  # a comment block above a statement is read this far up


def stated(text: str, first_line: int = 0, families: bool = True) -> tuple[list[tuple[str, ...]], list[str]]:
    """The needs `text` (comments or a message) states, and for each where: the word and its line.
    `families`: kernel families count too (beside a statement; a module's prose that names FA3
    may be about any of the versions it serves)."""
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    if not _STATED.search(text):
        return needs, where
    for hit in _STATED.finditer(text):
        before = text[max(0, hit.start() - 40) : hit.start()]
        word = hit[0].lower()
        if not families and _FAMILY.match(word):
            continue
        if _NEGATED.search(before) or (word == "multicast" and _NOT_NVLS.search(before)):
            continue
        need = next(feats for prefix, feats in _FEATURE if word.startswith(prefix))
        if need in needs:
            continue
        needs.append(need)
        line = f" (line {first_line + text.count(chr(10), 0, hit.start())})" if first_line else ""
        where.append(f"'{' '.join(hit[0].split())}'{line}")  # ("tensor\nmemory" read over a line break)
    return needs, where


def comment_block(lines: list[str], first: int, last: int = 0) -> tuple[str, int]:
    """The comment lines right above line `first` and the comments on lines `first`..`last`
    (1-based), as one text, and the file line it starts at."""
    last = max(last, first)
    i = first - 2
    while i >= 0 and first - 2 - i < _BLOCK_LINES and lines[i].lstrip().startswith("#"):
        i -= 1
    start = i + 2
    out = [ln.lstrip() for ln in lines[start - 1 : first - 1]]
    for ln in lines[first - 1 : last]:
        at = ln.find("#")
        out.append(ln[at:] if at >= 0 else "")
    return "\n".join(out), start


_WORDS = (
    "tcgen05", "umma", "tmem", "wgmma", "warpgroup", "warp-group", "multimem", "nvls", "multicast",
    "trtllm", "trt-llm", "fa3", "attention3", "attention-3", "attention 3", "deepgemm", "deep_gemm",
    "deep gemm", "deep-gemm", "tensor memory", "tensor\nmemory", "tensor-memory", "cta_group", "cvt.rs",
)  # fmt: skip


def may_state(low: str | bytes) -> bool:
    """Can the file's lowercased text (or its lowercased UTF-8 bytes) state a need at all? (A
    plain `in` rules out nearly every file.)"""
    return holds_any(low, _WORDS)


_TOP_COMMENT = re.compile(r"^#[^\n]*", re.M)
# where a need the module's own words state is told to be (`facts.needs_from`), by the kind of words;
# a top-level comment's are words anywhere in the module, not at the decision a rule judges
_IN_MODULE = "in the module's {}"
FAR_COMMENT = _IN_MODULE.format("comments")


def add_module_needs(facts: FileFacts, lines: list[str], text: str) -> None:
    """What the module's docstring and its top-level comments (column 0) state it needs. Read on
    the file's own text: the statement cut may have dropped the docstring."""
    parts: list[tuple[str, int, str]] = []
    doc = _docstring(lines)
    if doc is not None:
        parts.append((*doc, "docstring"))
    for hit in _top_comments(text):
        if _STATED.search(hit[0]):
            parts.append((hit[0], text.count("\n", 0, hit.start()) + 1, "comments"))
    parts += _constant_comments(lines)
    for part, line, kind in parts:
        needs, where = stated(part, line, families=False)
        for need, seen in zip(needs, where, strict=True):
            if need not in facts.needs:
                facts.needs.append(need)
                facts.needs_from.append(f"{seen} {_IN_MODULE.format(kind)}")


_CONSTANT = re.compile(r"[A-Za-z_]\w*\s*(?::[^=#]*)?=[^#]*(#.*)")


def _constant_comments(lines: list[str]) -> list[tuple[str, int, str]]:
    """The comments beside the module's own constants (`CLUSTER_SIZE = 2  # CTAs per cluster
    (cta_group::2)`) that state a need: what the module's kernels are built for."""
    out: list[tuple[str, int, str]] = []
    for i, line in enumerate(lines):
        if "#" in line and (line[:1].isalpha() or line[:1] == "_"):
            hit = _CONSTANT.match(line)
            if hit is not None and _STATED.search(hit[1]):
                out.append((hit[1], i + 1, "comments"))
    return out


def _top_comments(text: str) -> Iterator[re.Match[str]]:
    """`_TOP_COMMENT.finditer(text)`: a `#` at a line's start, found by `str.find` (the regex's
    `^` was tried at every position of the file)."""
    starts = [0] if text.startswith("#") else []
    at = text.find("\n#")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n#", at + 1)
    for start in starts:
        hit = _TOP_COMMENT.match(text, start)
        if hit is not None:  # always: a `#` that starts a line
            yield hit


_DOC_START = re.compile(r"""^[rRuU]?(\"\"\"|''')""")


def _docstring(lines: list[str]) -> tuple[str, int] | None:
    """The module docstring's text and first line: the first statement, when a triple-quoted string."""
    for n, ln in enumerate(lines[:200], 1):
        if not ln.strip() or ln.startswith("#"):
            continue
        start = _DOC_START.match(ln)
        if start is None:
            return None
        quote = start[1]
        body = [ln[start.end() :]]
        if quote in body[0]:
            return body[0], n
        for ln2 in lines[n : n + 400]:
            body.append(ln2)
            if quote in ln2:
                break
        return "\n".join(body), n
    return None


def docstring(lines: list[str]) -> tuple[str, int] | None:
    """The module docstring's text and first line (None when the module has none)."""
    return _docstring(lines)


def add_statement_needs(facts: FileFacts, lines: list[str]) -> None:
    """Each table's and decision's comment block (above it and on its test's lines)."""
    for table in facts.tables:
        table.needs, table.needs_from = stated(*comment_block(lines, table.line))
    for d in facts.decisions:
        d.needs, d.needs_from = stated(*comment_block(lines, d.line, d.end))


# A directory or module named after the arch its kernels are written for (`third_party/fmha_sm100/`,
# `kernel/sm100/`, `alphamoe_sm100.py`, `kernel_src/sm90/`): what that arch alone has.
_ARCH_PATH = re.compile(r"(?:^|[/_])(sm_?(?:90a?|10[03]a?|10x))(?=$|[/_.])")
_PATH_NEEDS = {"9": ("wgmma",), "1": ("tcgen05",)}


# TRT-LLM's fused MoE kernels are TRT-LLM-gen cubins, built for SM100-family GPUs only
# (`experts/trtllm_fp8_moe.py`); its attention (XQA) runs elsewhere too, so only the MoE counts.
# A module named for it (`trtllm_fp8_moe.py`, `flashinfer_trtllm_moe.py`); a kernel family of
# its own that only borrows the name (`cake_trtllm_moe_allreduce_union.py`) is not.
_TRTLLM_MOE = re.compile(r"(?:^|/)(?:flashinfer_)?trtllm_\w*moe\w*\.py$")


def path_need(path: str) -> tuple[str, ...] | None:
    """What a module path names as written for (`third_party/fmha_sm100/api`: tcgen05), if anything."""
    hit = _ARCH_PATH.search(path.lower())
    return None if hit is None else _PATH_NEEDS[hit[1].replace("sm", "").lstrip("_")[0]]


def add_path_needs(facts: FileFacts) -> None:
    """What the module's path says its code is written for."""
    path = facts.path.lower()
    hit = _ARCH_PATH.search(path)
    if hit is not None:
        _add(facts, _PATH_NEEDS[hit[1].replace("sm", "").lstrip("_")[0]], f"'{hit[1]}' in the module's path")
    moe = _TRTLLM_MOE.search(path)
    if moe is not None:
        name = moe[0].lstrip("/")
        _add(facts, ("tcgen05",), f"'{name}' in the module's path (TRT-LLM-gen MoE cubins)")


def _add(facts: FileFacts, need: tuple[str, ...], seen: str) -> None:
    if need not in facts.needs:
        facts.needs.append(need)
        facts.needs_from.append(seen)
