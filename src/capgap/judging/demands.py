"""A setting's default the engine's own check demands on the target.

`if is_sm100 and self.attention_backend is None and default is not None: self.attention_backend =
default`, with callers passing `default="triton"`, fills a setting the siblings are left without;
elsewhere `if is_blackwell(): assert backend == "triton" or backend == "trtllm_mha"` demands, on
every Blackwell and the target among them, one of those values. The target, left to the general
default, fails that check where nothing is asked for: the sibling's default is the target's only
way through, so its absence is a crash at a default launch (high), not a fast path lost.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from capgap.judging.reach import reached
from capgap.judging.statements import unset_attributes

if TYPE_CHECKING:
    from capgap.judging.records import Arm, Decision, FileFacts
    from capgap.judging.registry import Registry

_VALUE = re.compile(r"[A-Za-z][\w\-.]{0,47}")


def demanded(stmts: list[ast.stmt]) -> tuple[str, ...]:
    """What an assert among the statements demands of a setting (`assert args.backend == "a" or
    args.backend in ("b",)` -> "backend:a", "backend:b"); () when none does, or when it also
    accepts something else."""
    for stmt in stmts:
        if isinstance(stmt, ast.Assert):
            got = _one_of(stmt.test)
            if got:
                return got
    return ()


def _one_of(test: ast.expr) -> tuple[str, ...]:
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    out: list[str] = []
    names: set[str] = set()
    for part in parts:
        if not isinstance(part, ast.Compare) or len(part.ops) != 1:
            return ()
        left, right = part.left, part.comparators[0]
        if not isinstance(left, (ast.Attribute, ast.Name)):
            return ()
        items = (
            right.elts
            if isinstance(part.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set))
            else [right]
        )
        if not isinstance(part.ops[0], (ast.Eq, ast.In)) or not items:
            return ()
        if not all(
            isinstance(i, ast.Constant) and isinstance(i.value, str) and _VALUE.fullmatch(i.value)
            for i in items
        ):
            return ()
        name = left.attr if isinstance(left, ast.Attribute) else left.id
        names.add(name)
        out += [f"{name}:{i.value}" for i in items]  # type: ignore[attr-defined]
    return tuple(dict.fromkeys(out)) if len(names) == 1 else ()


class Demands:
    """The scan's arms that demand a setting be one of some strings, by setting (built on first use)."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._by_setting: dict[str, list[tuple[FileFacts, Decision, int]]] | None = None

    def _index(self) -> dict[str, list[tuple[FileFacts, Decision, int]]]:
        if self._by_setting is None:
            self._by_setting = {}
            for f in self._reg.files:
                for d in f.decisions:
                    for i, a in enumerate(d.arms):
                        for setting in dict.fromkeys(x.partition(":")[0] for x in a.demands):
                            self._by_setting.setdefault(setting, []).append((f, d, i))
        return self._by_setting

    def of_default(self, d: Decision, arm: Arm, target: str) -> str:
        """Where the engine's own check demands, on the target, a value the arm gives as the default
        of a setting its test asks to be unset ("path:line 'the value'"; "" when none does)."""
        settings = [*unset_attributes(arm.test), *(u.rsplit(".", 1)[-1] for u in d.unset)]
        for setting in dict.fromkeys(settings):
            given = {f"{setting}:{v}" for v in arm.values}
            for f, check, i in self._index().get(setting, []):
                wanted = [w for w in check.arms[i].demands if w in given]
                if not wanted or check is d:
                    continue
                r = reached(check, self._reg.context(check.scope, f))
                if r is None or i not in r.reach.get(target, ()) or r.value(i, target) is not True:
                    continue
                value = wanted[0].partition(":")[2]
                return f"{f.path}:{check.arms[i].line} demands '{value}' of {setting}"
        return ""
