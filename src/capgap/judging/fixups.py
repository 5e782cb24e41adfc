"""A sibling's fix-up of its own generic default, which the target never needs.

Engines pick a default for everyone (`get_default_attn_backend()`) and then correct it for one
arch where that default does not fit a model:

    if is_sm100 and cfg.attention_backend is None:
        backend = get_default_attn_backend(...)      # trtllm_mha on SM100
        if backend == "trtllm_mha" and needs_page_1:
            overrides["attention_backend"] = "triton"

The branch asks the default resolver and overrides its answer; an arch left out of it keeps the
resolver's answer untouched. That is no path it loses: the resolver itself is the decision that
says what each arch gets, and it is judged on its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from capgap.judging import choices
from capgap.judging.reach import reached
from capgap.judging.statements import unset_attributes

if TYPE_CHECKING:
    from capgap.judging.records import Arm, Decision, FileFacts
    from capgap.judging.registry import Registry

# `calls get_default_attn_backend()`, `calls _default_moe_runner()`, `calls get_fallback_backend()`
_ASKS_DEFAULT = re.compile(r"\bcalls (\w*(?:default|fallback)\w*)\(\)", re.I)
# What leaves every setting as it was: nothing done, an empty answer of overrides
_UNTOUCHED = re.compile(r"^(?:skips the branch|does nothing|(?:carries on \()?returns (?:\{\}|None)\)?)$")


def default_fixup(taken: str, instead: list[str]) -> str:
    """Words naming the default resolver the sibling's arm (`taken`) asks and then corrects, when
    every outcome of the target leaves the settings untouched ("" otherwise)."""
    hit = _ASKS_DEFAULT.search(taken)
    if hit is None or not instead or not all(_UNTOUCHED.match(s) for s in instead):
        return ""
    return f"it corrects the answer of {hit[1]}(), which the others keep as it is"


def prior_fixup(prior: str, taken: str, instead: list[str]) -> str:
    """Words naming the default resolver whose answer, given a variable just before the decision
    (`fallback = get_fallback_backend()`), the sibling's arm overrides (`sets fallback = 'fa4'`),
    where every outcome of the target keeps it ("" otherwise)."""
    name, _, function = prior.partition("=")
    hit = _SETS.match(taken)
    if (
        not name
        or hit is None
        or hit[1] != name
        or not instead
        or not all(_UNTOUCHED.match(s) for s in instead)
    ):
        return ""
    return f"it overrides the answer of {function}() given just before, which the others keep as it is"


_SETS = re.compile(r"^(?:carries on \()?sets (\w+) = ")


# A function named for the default of a setting it answers: `get_default_attn_backend` for
# `attention_backend` (each word of its name after "default" abbreviates one of the setting's:
# `attn` is `attention` with letters left out)
_RESOLVER = re.compile(r"(?:^|_)default_(\w+)$", re.I)


def _abbreviates(short: str, word: str) -> bool:
    """Is `short` `word` with letters left out, first letter kept (`attn`, `attention`)?"""
    if not short or short[0] != word[0]:
        return False
    rest = iter(word)
    return all(ch in rest for ch in short)


def _answers(function: str, setting: str) -> bool:
    hit = _RESOLVER.search(function)
    if hit is None:
        return False
    mine, theirs = hit[1].lower().split("_"), setting.lower().split("_")
    return len(mine) == len(theirs) and all(_abbreviates(a, b) for a, b in zip(mine, theirs, strict=True))


def default_gives(d: Decision, taken: Arm, instead: list[str], target: str, reg: Registry) -> str:
    """Words naming the engine's default resolver of a setting the sibling's arm fills in when
    unset (`if is_sm100 and cfg.attention_backend is None: return {"attention_backend":
    "flashinfer"}`), where the target leaves it unset and that resolver can give the target the
    very value ("" otherwise): the sibling's override of its own default, which the target's
    already is."""
    unset = (*d.unset, *unset_attributes(taken.test))
    if not unset or not taken.values or not instead or not all(_UNTOUCHED.match(s) for s in instead):
        return ""
    for f, other, setting, arms in _resolvers(unset, target, reg):
        given = {v for i in arms for v in other.arms[i].values}
        same = [v for v in taken.values if v in given]
        if same:
            function = other.context.rsplit(".", 1)[-1]
            return (
                f"{function}() ({f.path}:{other.line}), the default of {setting}, can give {target} "
                f"'{same[0]}' already"
            )
    return ""


def default_own(d: Decision, taken: Arm, instead: list[str], target: str, reg: Registry) -> str:
    """The named value of its own (`'flashinfer'`, no portable fallback) that the engine's default
    resolver of a setting the sibling's arm fills in when unset can give the target, where the
    target leaves the setting unset and the resolver never gives it the sibling's value ("" otherwise):
    the sibling's default and the target's are a choice between implementations."""
    unset = (*d.unset, *unset_attributes(taken.test))
    if not unset or not taken.values or not instead or not all(_UNTOUCHED.match(s) for s in instead):
        return ""
    for f, other, _, arms in _resolvers(unset, target, reg):
        # (an arm holding a decision of its own, `if not use_mla: <the arch chain>`, gives what
        # that inner decision gives each arch: read there)
        given = [v for i in arms if not _holds_decision(f, other, i) for v in other.arms[i].values]
        if any(v in given for v in taken.values):
            return ""
        own = [v for v in dict.fromkeys(given) if not choices.fallback(v)]
        if own:
            return own[0]
    return ""


def _resolvers(
    unset: tuple[str, ...], target: str, reg: Registry
) -> Iterator[tuple[FileFacts, Decision, str, tuple[int, ...]]]:
    """Each decision of the scan in a function named for the default of a setting asked unset
    (`get_default_attn_backend` for `attention_backend`), with that setting and the arms the
    target reaches there."""
    for f in reg.files:
        for other in f.decisions:
            function = other.context.rsplit(".", 1)[-1]
            setting = next((s for s in unset if _answers(function, s)), None)
            if setting is None:
                continue
            r = reached(other, reg.context(other.scope, f))
            yield f, other, setting, (r.reach.get(target, ()) if r is not None else ())


def _holds_decision(f: FileFacts, d: Decision, arm: int) -> bool:
    """Does the arm's body hold another decision of the file?"""
    start, end = d.arms[arm].body
    return bool(start) and any(o is not d and start <= o.line <= end for o in f.decisions)
