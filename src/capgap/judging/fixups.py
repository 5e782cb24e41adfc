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
