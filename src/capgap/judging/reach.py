"""Which outcome of a decision each arch can reach.

Each arm's test is evaluated three-valued per known arch (True / False / None: depends on more
than the arch), in order, as Python runs an elif chain: a True test takes its arm and ends the
walk, a None test may take it and goes on, a False one is passed over; the last arm (else, or the
rest of the block after guard clauses) takes what is left. mypy's reachability does this for one
configuration; here every arch is one, so "12.0 reaches the else while 9.0 and 10.0 get arms of
their own" is a comparison of sets.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from capgap.arch import ArchFacts, all_facts
from capgap.judging.records import Decision
from capgap.judging.symbolic import CAP_TESTS, Context, Sym, call_name, evaluate, tri

Test = Callable[[ArchFacts], "bool | None"]
Query = tuple[str, int, Sym]  # a conjunct's text, its line, its value


@dataclass
class Reached:
    decision: Decision
    syms: list[Sym | None]  # each arm's test, evaluated (None: the else / rest arm)
    reach: dict[str, tuple[int, ...]]  # cc -> the arms that arch can reach, in order
    # per arm, the conjuncts of its test that ask a helper of the tree with constant arguments
    # (`supports_trtllm_attention(is_prefill=True)`), evaluated: the engine's own queries
    queries: list[list[Query]]
    # the other decisions of the same function: a path one of them gives the target is its own
    peers: list[Reached] = field(default_factory=list)

    def names(self, arm: int) -> tuple[str, ...]:
        sym = self.syms[arm]
        return sym.names if sym is not None else ()

    def archs_reaching(self, arm: int) -> list[str]:
        return [cc for cc, arms in self.reach.items() if arm in arms]

    def peers_below(self, arm: int) -> list[Reached]:
        """The later decisions of the function inside `arm` when it is the rest of a block past
        guard clauses ([] for any other arm): what they give an arch is decided there."""
        d = self.decision
        if d.kind != "guards" or arm != len(d.arms) - 1:
            return []
        first, last = d.arms[arm].body
        return [p for p in self.peers if first <= p.decision.line <= last]

    def value(self, arm: int, cc: str) -> bool | None:
        sym = self.syms[arm]
        return None if sym is None else _safe(tri(sym), all_facts()[cc])


def reached(decision: Decision, ctx: Context) -> Reached | None:
    """The arms each known arch reaches; None when no test depends on the arch."""
    syms: list[Sym | None] = [None if arm.test is None else evaluate(arm.test, ctx) for arm in decision.arms]
    if not any(s is not None and s.kind == "pred" for s in syms):
        return None
    parts = [[(ast.dump(p), p) for p in _conjuncts(arm.test)] for arm in decision.arms]
    shared = _shared_conditions(parts, ctx)
    if shared:
        reach = _reach_per_setting(syms, parts, shared, ctx)
    else:
        reach = _reach([None if s is None else tri(s) for s in syms])
    if len(set(reach.values())) == 1:
        return None
    return Reached(decision, syms, reach, [_queries(arm.test, ctx) for arm in decision.arms])


def _queries(test: ast.expr | None, ctx: Context) -> list[Query]:
    """The conjuncts of `test` that call a helper of the tree with constant arguments, where the
    helper's answer depends on the arch (a capability test of its own is not one: `has_device_
    capability(90)`, nor a helper handed the capability, which is the arch test itself)."""
    parts = _conjuncts(test)
    out: list[Query] = []
    for part in parts if len(parts) > 1 else ():
        if not (isinstance(part, ast.Call) and (part.args or part.keywords)):
            continue
        if call_name(part.func).split(".")[-1] in CAP_TESTS:
            continue
        values = [*part.args, *(k.value for k in part.keywords)]
        if not all(evaluate(v, ctx).kind == "const" for v in values):
            continue
        sym = evaluate(part, ctx)
        if sym.kind == "pred":
            out.append((ast.unparse(part), part.lineno, sym))
    return out


def _reach(tests: list[Test | None]) -> dict[str, tuple[int, ...]]:
    return {
        cc: arms_taken(True if test is None else _safe(test, arch) for test in tests)
        for cc, arch in all_facts().items()
    }


_MAX_SHARED = 3  # settings of the shared conditions tried: 2 ** 3
Parts = list[list[tuple[str, ast.expr]]]  # each arm's conjuncts, with their ast.dump


def _shared_conditions(parts: Parts, ctx: Context) -> list[str]:
    """Conditions no arch decides that two or more arms test alike (`is_cuda` in `if is_cuda and
    is_sm100: ... elif is_cuda and sm >= 80: ...`): one value for the whole chain, not one per arm,
    so an arch whose own arm is the earlier one never reaches the later one."""
    seen: dict[str, int] = {}
    node: dict[str, ast.expr] = {}
    for arm_parts in parts:
        for dumped, part in arm_parts:
            node.setdefault(dumped, part)
        for dumped in {d for d, _ in arm_parts}:
            seen[dumped] = seen.get(dumped, 0) + 1
    shared = [dumped for dumped, count in seen.items() if count > 1]
    undecided = [dumped for dumped in shared if evaluate(node[dumped], ctx).kind == "unknown"]
    return undecided[:_MAX_SHARED]


def _conjuncts(test: ast.expr | None) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return list(test.values)
    return [test] if test is not None else []


def _reach_per_setting(
    syms: list[Sym | None], parts: Parts, shared: list[str], ctx: Context
) -> dict[str, tuple[int, ...]]:
    """What each arch reaches under every setting of the shared conditions, together."""
    rest: list[Test | None] = []  # each arm's test less the shared conditions (None: none left)
    for sym, arm_parts in zip(syms, parts, strict=True):
        if sym is None or not any(dumped in shared for dumped, _ in arm_parts):
            rest.append(None if sym is None else tri(sym))
            continue
        kept = [part for dumped, part in arm_parts if dumped not in shared]
        test = kept[0] if len(kept) == 1 else ast.BoolOp(op=ast.And(), values=kept) if kept else None
        rest.append(None if test is None else tri(evaluate(test, ctx)))
    out: dict[str, set[int]] = {cc: set() for cc in all_facts()}
    for setting in itertools.product((True, False), repeat=len(shared)):
        off = {dumped for dumped, on in zip(shared, setting, strict=True) if not on}
        tests = [
            _NEVER if any(d in off for d, _ in arm_parts) else t
            for t, arm_parts in zip(rest, parts, strict=True)
        ]
        for cc, arms in _reach(tests).items():
            out[cc].update(arms)
    return {cc: tuple(sorted(arms)) for cc, arms in out.items()}


def _never(arch: ArchFacts) -> bool:
    return False


_NEVER: Test = _never


def arms_taken(answers: Iterable[bool | None], none: int | None = None) -> tuple[int, ...]:
    """The arms an elif chain may take, given each arm's test answer in order (asked lazily: a
    True one ends the walk): a None answer may take its arm and goes on, a False one is passed
    over. `none`: what to add when no arm surely took over (`#if` without `#else`)."""
    got: list[int] = []
    for i, answer in enumerate(answers):
        if answer is False:
            continue
        got.append(i)
        if answer is True:
            return tuple(got)
    if none is not None:
        got.append(none)
    return tuple(got)


def truth(sym: Sym, arch: ArchFacts) -> bool | None:
    """What an evaluated test gives the arch: True, False, or None when it cannot be told."""
    return _safe(tri(sym), arch)


def _safe(test: Test, arch: ArchFacts) -> bool | None:
    try:
        value = test(arch)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError, RecursionError):
        return None
    return None if value is None else bool(value)


def pure(r: Reached, arm: int) -> bool:
    """Is the arm's test a function of the arch alone (no arch answers None)?"""
    return all(r.value(arm, cc) is not None for cc in all_facts())


def open_ended(r: Reached, i: int) -> bool:
    """Is arm `i` written for archs from some generation on (`major >= 9`), so that it also takes
    an arch newer than any known one, rather than for the archs it names (`family(120)`)?"""
    newest = max(all_facts().values(), key=lambda a: (a.major, a.minor))
    future = replace(newest, cc=f"{newest.major + 5}.0", major=newest.major + 5, minor=0)
    return i in arms_taken(True if s is None else _safe(tri(s), future) for s in r.syms)
