"""Which arm of each group a compile environment takes, following the tree's own `#define`s.

`CUTLASS_ARCH_MMA_SM90A_ENABLED` is defined in cutlass/arch/config.h under
`__CUDA_ARCH__ == 900` and `defined(__CUDA_ARCH_FEAT_SM90_ALL)`; a gate on it is decided by
evaluating those conditions for the environment. A definition counts when the arms it sits in
are taken; one later in the same file than the condition asking does not (an include guard's
`#ifndef X` / `#define X`); one in another file does (as if included first). A name neither the
tree nor nvcc defines is unknown (a `-D` flag), and so is whatever depends on it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

from capgap.judging.reach import arms_taken
from capgap.native import expr
from capgap.native.envs import COMPILER, NEVER, Env
from capgap.native.records import Define, Group, NativeFacts

NOT_REACHED = -2  # in a reach: the group itself may not be reached (an unknown outer condition)
NO_ARM = -1  # in a reach: no arm is taken (an #if without #else, all false)
Reach = tuple[int, ...]


class Table:
    def __init__(self, files: list[NativeFacts]) -> None:
        self.files = files
        self.defs: dict[str, list[tuple[int, Define]]] = defaultdict(list)
        for fi, f in enumerate(files):
            for d in f.defines:
                self.defs[d.name].append((fi, d))
        self._reach: dict[tuple[int, int, str], Reach] = {}
        self._memo: dict[tuple[str, str, str, int, int], expr.Value] = {}
        self._active: set[str] = set()
        self._pure: dict[tuple[str, str], expr.Value] = {}
        self._shared: dict[tuple[tuple[str, ...], str], Reach] = {}
        self._conds: dict[tuple[int, int], tuple[tuple[str, ...], bool]] = {}

    def reach(self, fi: int, gi: int, env: Env) -> Reach:
        """The arms `env` may take (NO_ARM: none; NOT_REACHED: maybe the group is not reached);
        () when it surely does not reach the group."""
        key = (fi, gi, env.name)
        found = self._reach.get(key)
        if found is not None:
            return found
        g = self.files[fi].groups[gi]
        maybe_not = False
        if g.parent is not None:
            outer = self.reach(fi, g.parent[0], env)
            if g.parent[1] not in outer:
                self._reach[key] = ()
                return ()
            maybe_not = len(outer) > 1
        own = self._own(fi, gi, g, env)
        out = (*own, NOT_REACHED) if maybe_not else own
        self._reach[key] = out
        return out

    def _own(self, fi: int, gi: int, g: Group, env: Env) -> Reach:
        """The arms `env` may take once the group is reached: shared by every group of the same
        conditions when the environment alone decides them (most `__CUDA_ARCH__` gates)."""
        found = self._conds.get((fi, gi))
        if found is None:
            conds = tuple(a.cond for a in g.arms)
            found = self._conds[(fi, gi)] = (conds, all(_pure(c) for c in conds))
        conds, pure = found
        if pure and (conds, env.name) in self._shared:
            return self._shared[(conds, env.name)]
        answers = (expr.answer(self.evaluate(arm.cond, env, fi, arm.offset)) for arm in g.arms)
        out = arms_taken(answers, none=NO_ARM)
        if pure:
            self._shared[(conds, env.name)] = out
        return out

    def evaluate(self, cond: str, env: Env, fi: int, offset: int) -> expr.Value:
        if _pure(cond):  # decided by the environment alone: the same in every file
            key = (cond, env.name)
            if key not in self._pure:
                self._pure[key] = expr.evaluate(expr.parse(cond), _Resolver(self, env, fi, offset))
            return self._pure[key]
        return expr.evaluate(expr.parse(cond), _Resolver(self, env, fi, offset))

    def _usable(self, name: str, fi: int, offset: int) -> list[tuple[int, Define]]:
        return [(dfi, d) for dfi, d in self.defs.get(name, ()) if dfi != fi or d.offset < offset]

    def _state(self, fi: int, d: Define, env: Env) -> expr.Value:
        """Is this definition made in `env`: 1, 0, or None (unknown)?"""
        if d.parent is None:
            return 1
        outer = self.reach(fi, d.parent[0], env)
        if d.parent[1] not in outer:
            return 0
        return 1 if len(outer) == 1 else None

    def _lookup(
        self, what: str, name: str, env: Env, fi: int, offset: int, args: tuple[str, ...] = ()
    ) -> expr.Value:
        if not self.defs.get(name):
            return None  # nothing in the tree defines it: a build flag, unknown
        usable = self._usable(name, fi, offset)
        if not usable:
            return 0 if what != "call" else None  # defined only later in this file: not yet
        here = sum(1 for dfi, _ in usable if dfi == fi)
        mine = here or any(dfi == fi for dfi, _ in self.defs.get(name, ()))
        key = (what, name, env.name, fi if mine else -1, here)
        if not args and key in self._memo:
            return self._memo[key]
        if name in self._active:
            return None  # a cycle of definitions
        self._active.add(name)
        try:
            out = self._compute(what, name, env, usable, args)
        finally:
            self._active.discard(name)
        if not args:
            self._memo[key] = out
        return out

    def _compute(
        self, what: str, name: str, env: Env, usable: list[tuple[int, Define]], args: tuple[str, ...]
    ) -> expr.Value:
        if not self.defs.get(name):
            return None  # nothing in the tree defines it: a build flag, unknown
        states = [(self._state(dfi, d, env), dfi, d) for dfi, d in usable]
        if what == "defined":
            if any(s == 1 for s, _, _ in states):
                return 1
            return None if any(s is None for s, _, _ in states) else 0
        made = [(dfi, d) for s, dfi, d in states if s == 1 and (d.params is None) == (what == "value")]
        if not made:
            if any(s is None for s, _, _ in states):
                return None
            return 0 if what == "value" else None
        dfi, d = made[0]
        text = d.value
        if what == "call":
            if d.params is None or len(d.params) != len(args):
                return None
            for param, arg in zip(d.params, args, strict=True):
                text = re.sub(rf"\b{re.escape(param)}\b", f"({arg})", text)
        if not text.strip():
            return None
        return expr.evaluate(expr.parse(text), _Resolver(self, env, dfi, d.offset))


_NAME = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=16384)
def _pure(cond: str) -> bool:
    return all(
        n == "defined" or n.startswith("__CUDA_ARCH") or n in COMPILER or n in NEVER
        for n in _NAME.findall(cond)
    )


class _Resolver(expr.Resolver):
    def __init__(self, table: Table, env: Env, fi: int, offset: int) -> None:
        self.table, self.env, self.fi, self.offset = table, env, fi, offset

    def defined(self, name: str) -> expr.Value:
        known = self.env.known(name)
        if known is not None:
            return known
        return self.table._lookup("defined", name, self.env, self.fi, self.offset)

    def value(self, name: str) -> expr.Value:
        if name in self.env.macros:
            return self.env.macros[name]
        if self.env.known(name) == 0:
            return 0
        return self.table._lookup("value", name, self.env, self.fi, self.offset)

    def call(self, name: str, args: tuple[str, ...]) -> expr.Value:
        if name == "__CUDA_ARCH_HAS_FEATURE__" and len(args) == 1:
            return self.defined("__CUDA_ARCH_FEAT_" + args[0].replace(" ", ""))
        if name == "defined":
            return None
        return self.table._lookup("call", name, self.env, self.fi, self.offset, args)
