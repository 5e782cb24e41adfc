"""A choice between two named implementations of one setting.

`backend = "cute-dsl" if is_sm100 else "cuda"`, `fmha_backend = "cutlass"` on SM100 and `"auto"`
elsewhere: both arms name an implementation, and the target is handed one of its own, not a
portable fallback (`triton`, `torch`). Without evidence that the target could run the sibling's
pick, this is the engine's per-arch choice: worth measuring, not a path the target lacks.
"""

from __future__ import annotations

import re

from capgap.judging.evidence import needs_in

# `returns 'x'`, `gives 'x'`, `sets self.backend = 'x'`, each possibly `carries on (...)`
_PICK = re.compile(r"^(?:carries on \()?(returns|gives|sets [\w.\[\]']+ =) '([\w\-.]+)'\)?$")
# Implementations any CUDA GPU runs, and words for the lesser path: a target sent to one of them
# is worked around, not given a choice of its own
_FALLBACK = re.compile(
    r"^(?:triton|torch|pytorch|sdpa|naive|native|eager|reference|emulat"
    r"|slow|fallback|default|generic|basic|simple|plain|unfused|simt|none|off|disabled?)",
    re.I,
)


def fallback(value: str) -> bool:
    """Is the value a portable implementation or a word for the lesser path (`triton`, `default`)?"""
    return bool(_FALLBACK.match(value))


def _pick(summary: str) -> tuple[str, str] | None:
    hit = _PICK.match(summary)
    return (hit[1], hit[2]) if hit else None


def unpicked(summary: str) -> bool:
    """Does the summary say something other than a named pick (`logs '...'`, `calls info()`)?"""
    return _pick(summary) is None


def own_choice(
    taken: str, instead: list[str], given: tuple[str, ...] = (), gives: list[tuple[str, ...]] | None = None
) -> str:
    """The target's own named pick ("" when there is none): the sibling's outcome `taken` and
    every outcome of the target each set the same thing to one named value, and the target's is
    no portable fallback. Where a summary says something else first (`calls info()` after the
    assignment), the one string each arm's code gives (`given`, `gives`) is read instead."""
    theirs = _pick(taken)
    mine = [_pick(s) for s in instead]
    if theirs is None or not mine or any(m is None for m in mine):
        return _own_value(given, gives or []) or _own_call(taken, instead)
    values = {m[1] for m in mine if m is not None}
    if len(values) != 1 or theirs[1] in values:
        return ""
    if any(m is not None and m[0] != theirs[0] for m in mine):
        return ""  # not the same setting
    value = values.pop()
    return "" if _FALLBACK.match(value) else value


def _own_value(given: tuple[str, ...], gives: list[tuple[str, ...]]) -> str:
    """The target's one named value, where the sibling's arm gives one other value and each of the
    target's arms gives that same one ("" otherwise)."""
    if len(given) != 1 or not gives or any(len(g) != 1 for g in gives):
        return ""
    values = {g[0] for g in gives}
    if len(values) != 1 or given[0] in values:
        return ""
    value = values.pop()
    return "" if _FALLBACK.match(value) or _FALLBACK.match(given[0]) else value


# `returns get_cake_router_gemm_module()`, `sets self.kernel = load_dsv3_kernel(x)`
_CALL = re.compile(r"^(?:carries on \()?(returns|gives|sets [\w.\[\]']+ =) ([\w.]+)\((?:.*\)\)?|.*\.\.\.)$")


def _own_call(taken: str, instead: list[str]) -> str:
    """The word naming the target's own implementation where the sibling's outcome and each of the
    target's hand over the same thing from functions named alike but for one word
    (`get_cake_router_gemm_module()` beside `get_dsv3_router_gemm_module()`): "dsv3" ("" otherwise,
    and where either word is a portable fallback's)."""
    theirs = _CALL.match(_PREPARED.sub("", taken))
    mine = [_CALL.match(_PREPARED.sub("", s)) for s in instead]
    if theirs is None or not mine or any(m is None or m[1] != theirs[1] for m in mine):
        return ""
    names = {m[2] for m in mine if m is not None}
    if len(names) != 1:
        return ""
    name = names.pop()
    a, b = _words(theirs[2]), _words(name)
    if _same_operation(a, b):
        return name
    if len(a) != len(b):
        return ""
    apart = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(apart) != 1 or any(_FALLBACK.match(w) or _ARCHISH.search(w) or needs_in(w) for w in apart[0]):
        return ""  # `run_tcgen05_kernel()` / `run_simt_kernel()`: a feature's path and the portable one
    return apart[0][1]


_ARCHISH = re.compile(r"sm_?\d|hopper|blackwell|ampere|ada|volta|turing")
# `calls split(), returns f(...)`: what an arm prepares before it hands over its answer
_PREPARED = re.compile(r"(?<=^carries on \()(?:calls [\w.]+\(\), )+|^(?:calls [\w.]+\(\), )+")
_MIN_SHARED = 3  # `run_kernel` / `run_fused_kernel` share too little to name one operation


def _same_operation(theirs: list[str], mine: list[str]) -> bool:
    """Does the target's function name every word of the sibling's, in any order, and at most words
    of its own that name no arch, need or fallback (`concat_mla_kv_quant_fp8` beside
    `fused_mla_kv_concat_quant_fp8`): the same operation, another implementation of it? A sibling
    with words the target's lacks (`run_fused_kernel` beside `run_kernel`) gets more than the target."""
    shared, extra = set(theirs) & set(mine), set(mine) - set(theirs)
    if set(theirs) - set(mine) or len(shared) < _MIN_SHARED or theirs == mine:
        return False
    return not any(_FALLBACK.match(w) or _ARCHISH.search(w) or needs_in(w) for w in extra)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[._]+", name.lower()) if w]
