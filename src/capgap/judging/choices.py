"""A choice between two named implementations of one setting.

`backend = "cute-dsl" if is_sm100 else "cuda"`, `fmha_backend = "cutlass"` on SM100 and `"auto"`
elsewhere: both arms name an implementation, and the target is handed one of its own, not a
portable fallback (`triton`, `torch`). Without evidence that the target could run the sibling's
pick, this is the engine's per-arch choice: worth measuring, not a path the target lacks.
"""

from __future__ import annotations

import re

# `returns 'x'`, `gives 'x'`, `sets self.backend = 'x'`, each possibly `carries on (...)`
_PICK = re.compile(r"^(?:carries on \()?(returns|gives|sets [\w.\[\]']+ =) '([\w\-.]+)'\)?$")
# Implementations any CUDA GPU runs, and words for the lesser path: a target sent to one of them
# is worked around, not given a choice of its own
_FALLBACK = re.compile(
    r"^(?:triton|torch|pytorch|sdpa|naive|native|eager|reference|emulat"
    r"|slow|fallback|default|generic|basic|simple|plain|unfused|none|off|disabled?)",
    re.I,
)


def _pick(summary: str) -> tuple[str, str] | None:
    hit = _PICK.match(summary)
    return (hit[1], hit[2]) if hit else None


def own_choice(taken: str, instead: list[str]) -> str:
    """The target's own named pick ("" when there is none): the sibling's outcome `taken` and
    every outcome of the target each set the same thing to one named value, and the target's is
    no portable fallback."""
    theirs = _pick(taken)
    mine = [_pick(s) for s in instead]
    if theirs is None or not mine or any(m is None for m in mine):
        return ""
    values = {m[1] for m in mine if m is not None}
    if len(values) != 1 or theirs[1] in values:
        return ""
    if any(m is not None and m[0] != theirs[0] for m in mine):
        return ""  # not the same setting
    value = values.pop()
    return "" if _FALLBACK.match(value) else value
