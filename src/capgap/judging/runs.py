"""A run of like decisions shares the comment above its first.

Authors explain a pair of statements once:

    # SM100's kernels expect scales as amax / 448; SM120 uses a different path.
    if is_sm100 and k_scale != 1.0:
        k_scale *= 6.0
    if is_sm100 and v_scale != 1.0:
        v_scale *= 6.0

The second `if` has no comment of its own, yet the words above the first are about it too. A
decision with no comment right above it, which starts on the line after a decision of the same
function that tests the same arch names, inherits that decision's comment sentences.
"""

from __future__ import annotations

import ast
import re

from capgap.judging.records import Decision
from capgap.judging.statements import walk

_ABOVE = "the comment above"
# Names that say which arch a test asks about (`is_sm100`, `get_device_capability`, `major`)
_ARCHISH = re.compile(
    r"capab|(^|_)sm_?(\d|$|_|version)|(^|_)cc($|_)|major|blackwell|hopper|ampere|arch", re.I
)


def arch_names(test: ast.expr | None) -> frozenset[str]:
    """The arch-asking names a test reads."""
    if test is None:
        return frozenset()
    found = set()
    for node in walk(test):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name and _ARCHISH.search(name):
            found.add(name)
    return frozenset(found)


def _last_line(d: Decision) -> int:
    return max([d.end, d.line, *(a.body[1] for a in d.arms)])


def inherited(
    earlier: list[Decision], line: int, kind: str, context: str, test: ast.expr | None
) -> list[str]:
    """The comment sentences (`Decision.prose` entries) of the `if` statement that ends right
    above the `if` at `line` in the same function and tests the same arch names, followed back
    along the run (an assignment in between, or a flag, ends the run)."""
    names = arch_names(test)
    if not names or kind != "chain":
        return []
    for d in reversed(earlier[-8:]):
        if d.context != context or _last_line(d) != line - 1:
            continue
        if d.kind != "chain":
            return []
        first = next((a.test for a in d.arms if a.test is not None), None)
        if arch_names(first) != names:
            return []
        return [entry for entry in d.prose if entry.startswith(_ABOVE)]
    return []
