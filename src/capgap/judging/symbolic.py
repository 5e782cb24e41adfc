"""Evaluate capability expressions symbolically: which archs does a predicate admit?

An expression is evaluated to a `Sym`: a constant, a capability value (a function of the arch:
`get_device_capability()` -> (12, 0), `[0]` -> 12, `major * 10 + minor` -> 120), a predicate
(arch -> bool), or unknown. Helpers such as `is_sm100_supported()` are followed to their
definitions (plain `def`s, module variables, `lru_cache(partial(f, majors=[10]))`), with Python's
own operator semantics, so `"12.0" >= "9.0"` is as wrong here as it is in the scanned code.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from capgap.arch import ArchFacts
from capgap.judging.foldbound import mul as bounded_mul

# Calls that read the device's compute capability, and the value they give.
CAP_CALLS: dict[str, Callable[[ArchFacts], Any]] = {
    "get_device_capability": lambda a: (a.major, a.minor),
    "get_compute_capability": lambda a: (a.major, a.minor),
}
# vLLM-style platform checks with a capability argument (`has_device_capability(90)`, `((9, 0))`).
CAP_TESTS: dict[str, Callable[[tuple[int, int], Any], bool]] = {
    "has_device_capability": lambda cap, want: _cap_cmp(cap, want) >= 0,
    "is_device_capability": lambda cap, want: _cap_cmp(cap, want) == 0,
    "is_device_capability_family": lambda cap, want: cap[0] == _as_cap(want)[0],
}
# Methods of a capability value that respell it (vLLM's DeviceCapability).
CAP_SPELLINGS: dict[str, Callable[[tuple[int, int]], Any]] = {
    "as_version_str": lambda cap: f"{cap[0]}.{cap[1]}",
    "to_int": lambda cap: cap[0] * 10 + cap[1],
}
# Platform checks that are false on every NVIDIA GPU / true on every one.
# (`is_cuda_static()`, `_is_hip`, `is_rocm_platform()`: the same question, spelled per engine)
# (`is_gfx1250_supported()`: an AMD GPU's own arch)
_PLATFORM_FORM = r"^_?is_({})(?:_static|_platform|_alike|_supported)?$"
_OTHER_PLATFORMS = r"hip|npu|cpu|xpu|musa|rocm|mps|tpu|hpu|neuron|gfx\d+[a-z]?"
FALSE_ON_CUDA = re.compile(_PLATFORM_FORM.format(_OTHER_PLATFORMS))
TRUE_ON_CUDA = re.compile(_PLATFORM_FORM.format("cuda|nvidia|available"))
# Names whose value evidently is a capability; the compared constant says which spelling.
CAP_NAME = re.compile(r"capabilit|(^|_)cc($|_)|(^|_)sm($|_)|sm_?version|(^|_)arch($|_)|major", re.I)

# What a version of software reads or is called: `torch.version.cuda`, `installed_cuda_version()`,
# `cuda_major`, `driver_version`: no GPU's capability, however its name ends ("_major")
_A_VERSION = re.compile(
    r"version\.cuda|(?:cuda|nvcc|driver|cudnn|nccl|torch|triton|toolkit|runtime)_?(?:major|minor|version)"
    r"|__version__|version_info",
    re.I,
)

_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: bounded_mul,  # no `"x" * (1 << 32)` at our expense
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


@dataclass
class Sym:
    kind: str  # "const" | "cap" | "namecap" | "pred" | "unknown"
    value: Any = None  # const value, or arch -> value / arch -> bool
    names: tuple[str, ...] = ()  # what was compared (helper, variable, call), for `symbol`


UNKNOWN = Sym("unknown")
Tri = "bool | None"  # a predicate's answer for one arch: True, False, or None (depends on more than the arch)


def _as_cap(value: Any) -> tuple[int, int]:
    if isinstance(value, tuple):
        return (int(value[0]), int(value[1]))
    return (int(value) // 10, int(value) % 10)


def _cap_cmp(cap: tuple[int, int], want: Any) -> int:
    other = _as_cap(want)
    return (cap > other) - (cap < other)


def tri(sym: Sym) -> Callable[[ArchFacts], bool | None]:
    """A Sym as a three-valued test of an arch: a predicate, a constant's truth, else None."""
    if sym.kind == "pred":
        return sym.value  # type: ignore[no-any-return]
    if sym.kind == "const":
        value = bool(sym.value)
        return lambda a: value
    return lambda a: None


def namecap_value(style_of: Any, arch: ArchFacts) -> Any:
    """A capability-named variable's value, in the spelling of the constant it is compared with."""
    sample = style_of
    if _is_cc_tuple(sample):
        return (arch.major, arch.minor)
    if isinstance(sample, bool):
        return None
    if isinstance(sample, int):
        return arch.major if sample < 20 else arch.number
    if isinstance(sample, str):
        if sample.lower().startswith("sm"):
            return f"sm_{arch.number}" if "_" in sample else f"sm{arch.number}"
        if "." in sample:
            return arch.cc
        return str(arch.number)
    return None


def _is_cc_tuple(v: Any) -> bool:
    return (
        isinstance(v, tuple)
        and len(v) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    )


@dataclass
class Context:
    """Where names come from: local assignments, module constants and helper definitions."""

    lookup: Callable[[str], Any]  # name -> ast.expr | Sym | None
    helper: Callable[[str], Any]  # name -> HelperDef | None
    depth: int = 0
    seen: set[str] = field(default_factory=set)
    alias: Callable[[str], str | None] = lambda name: None  # attribute -> the probe function it names
    # a setting's value taken as given (judging.validations): `backend == "fa3"` holds, `!=` fails
    given: frozenset[str] = frozenset()
    # what argument-less helpers gave, shared by every context of one scan (records.HelperDef)
    memo: dict[Any, list[Any]] | None = None

    def deeper(self, lookup: Callable[[str], Any] | None = None) -> Context:
        return Context(
            lookup or self.lookup, self.helper, self.depth + 1, self.seen, self.alias, self.given, self.memo
        )


def call_name(node: ast.AST) -> str:
    """`torch.cuda.get_device_capability` -> "get_device_capability"; `self.x` -> "self.x"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
            return f"{node.value.id}.{node.attr}"
        return node.attr
    return ""


def evaluate(node: ast.AST, ctx: Context) -> Sym:
    try:
        return _eval(node, ctx)
    except (TypeError, ValueError, ZeroDivisionError, RecursionError, AttributeError):
        return UNKNOWN


def _eval(node: ast.AST, ctx: Context) -> Sym:  # noqa: C901 - one dispatch over node types
    if isinstance(node, ast.Constant):
        return Sym("const", node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_eval(e, ctx) for e in node.elts]
        if all(i.kind == "const" for i in items):
            vals = [i.value for i in items]
            return Sym("const", set(vals) if isinstance(node, ast.Set) else tuple(vals))
        if (
            isinstance(node, ast.Tuple)
            and any(i.kind == "cap" for i in items)
            and all(i.kind in {"cap", "const"} for i in items)
        ):  # `(major, minor)`: the capability put back together
            fns = [i.value if i.kind == "cap" else (lambda a, v=i.value: v) for i in items]
            names = tuple(n for i in items for n in i.names)
            return Sym("cap", lambda a: tuple(f(a) for f in fns), names)
        return UNKNOWN
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _eval_name(node, ctx)
    if isinstance(node, ast.Call):
        return _eval_call(node, ctx)
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, ctx)
        idx = _eval(node.slice, ctx)
        if base.kind == "cap" and idx.kind == "const":
            fn, i = base.value, idx.value
            return Sym("cap", lambda a: fn(a)[i], base.names)
        return UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        return _eval_binop(node, ctx)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _eval(node.operand, ctx)
        if inner.kind == "pred":
            fn = inner.value
            return Sym("pred", lambda a: _negate(fn(a)), inner.names)
        if inner.kind == "const":
            return Sym("const", not inner.value)
        return UNKNOWN
    if isinstance(node, ast.BoolOp):
        return _eval_boolop(node, ctx)
    if isinstance(node, ast.Compare):
        return _eval_compare(node, ctx)
    if isinstance(node, ast.IfExp):
        default = _overridden_default(node)
        return _eval(default, ctx) if default is not None else UNKNOWN
    return UNKNOWN


def _overridden_default(node: ast.IfExp) -> ast.expr | None:
    """`_get_device_arch() if _arch is None else _arch`: a caller's override of a default, which
    is what runs unless a caller says otherwise; the default, or None for any other conditional."""
    test = node.test
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return None
    given, default = (node.orelse, node.body) if isinstance(test.ops[0], ast.Is) else (node.body, node.orelse)
    return default if ast.dump(given) == ast.dump(test.left) else None


_HIP_VERSION = {"torch.version.hip", "version.hip"}
_CUDA_VERSION = re.compile(r"version\.cuda\b|(?:^|_)cuda_?ver(?:sion)?\b", re.I)
_RECENT_CUDA = (12, 9)  # what a stack that runs Blackwell has: the toolkit that knows sm_120/sm_103
_CUDA_AT_LEAST = re.compile(r"cuda\w*(?:at_least|_ge|_gte|_min)$", re.I)


def _recent_cuda(node: ast.Compare, ctx: Context) -> Sym | None:
    """`torch.version.cuda >= "12.8"`, `get_cuda_version() < (12, 9)`: a stack that runs the GPUs
    capgap judges for has a CUDA toolkit at least this recent, so a floor at or below it holds and
    a ceiling at or below it does not."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.GtE, ast.Gt, ast.LtE, ast.Lt)):
        return None
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if not (_may_name_cuda(left) or _may_name_cuda(right)):
        return None
    if not _CUDA_VERSION.search(ast.unparse(left)):  # `(12, 8) <= cuda`: the version on the right
        left, right = right, left
        op = {ast.GtE: ast.LtE, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.Lt: ast.Gt}[type(op)]()
        if not _CUDA_VERSION.search(ast.unparse(left)):
            return None
    bound = _eval(right, ctx)
    version = _as_version(bound.value) if bound.kind == "const" else None
    if version is None:
        return None
    inclusive = isinstance(op, (ast.GtE, ast.Lt))  # where the bound itself lands
    if version < _RECENT_CUDA or inclusive and version == _RECENT_CUDA:
        return Sym("const", isinstance(op, (ast.GtE, ast.Gt)))
    return None


def _may_name_cuda(node: ast.expr) -> bool:
    """Can the expression's text hold "cuda" (any case)? Its names hold all of its letters but
    a string's, and a string is left to the text itself."""
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Constant)
            and isinstance(sub.value, (str, bytes))
            or isinstance(sub, ast.JoinedStr)
        ):
            return True
        word = (
            sub.id if isinstance(sub, ast.Name)
            else sub.attr if isinstance(sub, ast.Attribute)
            else sub.arg if isinstance(sub, (ast.keyword, ast.arg))
            else None
        )  # fmt: skip
        if word and "cuda" in word.lower():
            return True
    return False


def _as_version(value: object) -> tuple[int, ...] | None:
    try:
        if isinstance(value, tuple):
            return tuple(int(v) for v in value)
        if isinstance(value, (str, float, int)) and not isinstance(value, bool):
            return tuple(int(p) for p in str(value).split(".")[:2])
    except ValueError:
        return None
    return None


def _negate(value: bool | None) -> bool | None:
    return None if value is None else not value


def _eval_name(node: ast.Name | ast.Attribute, ctx: Context) -> Sym:  # noqa: C901 - the ways a name resolves
    name = call_name(node)
    # (an attribute's text ends with its name: only `.hip` is worth writing out)
    if isinstance(node, ast.Attribute) and node.attr == "hip" and ast.unparse(node) in _HIP_VERSION:
        return Sym("const", None)  # None on every CUDA build
    if isinstance(node, ast.Attribute) and node.attr in {"major", "minor"}:
        base = _eval(node.value, ctx)
        idx = 0 if node.attr == "major" else 1
        if base.kind == "cap":
            fn = base.value
            return Sym("cap", lambda a: fn(a)[idx], base.names)
        if "prop" in ast.unparse(node.value).lower() or "capab" in ast.unparse(node.value).lower():
            return Sym("cap", lambda a: (a.major, a.minor)[idx], (ast.unparse(node),))
    # `metadata.lens_2d` is an attribute of an object, not the local `lens_2d` of the same name
    of_object = isinstance(node, ast.Attribute) and "." not in name
    found = ctx.lookup(name) if name and name not in ctx.seen and not of_object else None
    if isinstance(found, Sym):
        return found
    if isinstance(found, ast.AST) and ctx.depth < 8:
        ctx.seen.add(name)
        try:
            inner = _eval(found, ctx.deeper())
        finally:
            ctx.seen.discard(name)
        if inner.kind != "unknown":
            return Sym(inner.kind, inner.value, (name, *inner.names))  # the variable compared comes first
        if _A_VERSION.search(ast.unparse(found)):
            return UNKNOWN  # `torch_cuda_major = int(torch.version.cuda.split(".")[0])`: a toolkit's major
    helper = ctx.helper(name) if name else None
    if helper is not None and helper.kind == "var" and ctx.depth < 8:
        return _eval_helper(helper, name, [], {}, ctx)
    if isinstance(node, ast.Attribute) and ctx.depth < 8 and name not in ctx.seen:
        # `platform.is_sm90`: a property (or a name a platform class maps to a probe function)
        prop = ctx.helper(f"obj.{node.attr}")
        if prop is None or not prop.method or prop.params:
            prop = ctx.helper(ctx.alias(node.attr)) if ctx.alias(node.attr) else None
        if prop is not None and not prop.params:
            found_prop = _eval_helper(prop, name, [], {}, ctx)
            if found_prop.kind != "unknown":
                return found_prop
    short = name.split(".")[-1]
    if short and CAP_NAME.search(short) and not _A_VERSION.search(short):
        return Sym("namecap", None, (name,))
    if FALSE_ON_CUDA.match(short):
        # `get_platform().is_hip`, `_is_gfx1250`: a property or flag no class or binding answered
        return Sym("const", False)
    return UNKNOWN


def _eval_call(node: ast.Call, ctx: Context) -> Sym:
    name = call_name(node.func)
    short = name.split(".")[-1]
    if short in CAP_CALLS:
        return Sym("cap", CAP_CALLS[short], (short,))
    if short in CAP_TESTS and node.args:
        want = _eval(node.args[0], ctx)
        if want.kind == "const" and isinstance(want.value, (int, tuple)) and not isinstance(want.value, bool):
            test, value = CAP_TESTS[short], want.value
            return Sym("pred", lambda a: test((a.major, a.minor), value), (f"{short}({value!r})",))
        return UNKNOWN
    if short in CAP_SPELLINGS and isinstance(node.func, ast.Attribute) and not node.args:
        base = _eval(node.func.value, ctx)
        if base.kind == "cap":
            fn, spell = base.value, CAP_SPELLINGS[short]
            return Sym("cap", lambda a: spell(_as_cap(fn(a))), base.names)
        return UNKNOWN
    if _CUDA_AT_LEAST.search(short) and len(node.args) == 1:  # `is_cuda_version_at_least("12.9")`
        floor = _eval(node.args[0], ctx)
        version = _as_version(floor.value) if floor.kind == "const" else None
        if version is not None and version <= _RECENT_CUDA:
            return Sym("const", True)
    if FALSE_ON_CUDA.match(short):
        return Sym("const", False)
    if TRUE_ON_CUDA.match(short):
        return Sym("const", True)
    if (
        short in {"any", "all"}
        and len(node.args) == 1
        and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
    ):
        return _eval_quantified(node.args[0], short == "all", ctx)  # type: ignore[arg-type]
    if short in {"tuple", "list", "frozenset", "set", "bool"} and len(node.args) == 1:
        return _eval(node.args[0], ctx)
    if short in {"int"} and len(node.args) == 1:
        return _eval(node.args[0], ctx)
    # `obj.is_blackwell()` is first a method; a bare `is_blackwell()` is a function or module variable
    if isinstance(node.func, ast.Attribute) and "." not in name:
        name = f"obj.{short}"
    helper = ctx.helper(name)
    if helper is None or ctx.depth >= 8 or name in ctx.seen:
        return UNKNOWN
    args = [_eval(a, ctx) for a in node.args]
    kwargs = {k.arg: _eval(k.value, ctx) for k in node.keywords if k.arg}
    return _eval_helper(helper, short, args, kwargs, ctx)


def _eval_helper(helper: Any, name: str, args: list[Sym], kwargs: dict[str, Sym], ctx: Context) -> Sym:
    """Run a helper's definition with its arguments bound; its first capability return wins."""
    ctx.seen.add(name)
    try:
        result = helper.evaluate(args, kwargs, ctx)
    finally:
        ctx.seen.discard(name)
    if result.kind in {"pred", "cap"}:
        return Sym(result.kind, result.value, (name,))
    return result if result.kind == "const" else UNKNOWN


def _eval_binop(node: ast.BinOp, ctx: Context) -> Sym:
    left, right = _eval(node.left, ctx), _eval(node.right, ctx)
    op = _BIN[type(node.op)]
    if left.kind == "namecap" and right.kind == "const" and right.value == 10:
        # `arch // 10`, `sm % 10`: only the number form (120 for 12.0) is split by ten
        if isinstance(node.op, ast.FloorDiv):
            return Sym("cap", lambda a: a.major, left.names)
        if isinstance(node.op, ast.Mod):
            return Sym("cap", lambda a: a.minor, left.names)
    if left.kind == "namecap" or right.kind == "namecap":
        return UNKNOWN
    if left.kind == "const" and right.kind == "const":
        return Sym("const", op(left.value, right.value))
    if {left.kind, right.kind} <= {"cap", "const"}:
        lf = left.value if left.kind == "cap" else (lambda a, v=left.value: v)
        rf = right.value if right.kind == "cap" else (lambda a, v=right.value: v)
        return Sym("cap", lambda a: op(lf(a), rf(a)), left.names + right.names)
    return UNKNOWN


def _eval_quantified(comp: ast.GeneratorExp | ast.ListComp, conj: bool, ctx: Context) -> Sym:
    """`any(is_family(f) for f in (80, 90, 120))`: the element test for each constant the loop
    runs over, joined as an `or` (`all`: an `and`)."""
    if len(comp.generators) != 1:
        return UNKNOWN
    gen = comp.generators[0]
    if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name):
        return UNKNOWN
    seq = _eval(gen.iter, ctx)
    if seq.kind != "const" or not isinstance(seq.value, (tuple, set, frozenset)) or len(seq.value) > 32:
        return UNKNOWN
    name, outer = gen.target.id, ctx.lookup
    parts = []
    for value in seq.value:
        bound = Sym("const", value)
        sub = ctx.deeper(lambda n, b=bound: b if n == name else outer(n))
        parts.append(_eval(comp.elt, sub))
    return _joined(parts, conj)


def _eval_boolop(node: ast.BoolOp, ctx: Context) -> Sym:
    """Three-valued: a part that is no function of the arch (a flag, a dtype) is None for every arch,
    so `flag and major >= 9` is False below 9.0 and None (it depends) from 9.0 on."""
    return _joined([_eval(v, ctx) for v in node.values], isinstance(node.op, ast.And))


def _joined(parts: list[Sym], conj_of: bool) -> Sym:
    preds = [p for p in parts if p.kind == "pred"]
    names = tuple(n for p in preds for n in p.names)
    if any(p.kind == "const" and bool(p.value) is not conj_of for p in parts):
        # `is_cpu() and has_amx`: False whatever the rest is (`or` with a True: True)
        return Sym("const", not conj_of)
    if not preds:
        consts = [p for p in parts if p.kind == "const"]
        if len(consts) == len(parts):
            pick = all if conj_of else any
            return Sym("const", pick(bool(c.value) for c in consts))
        return UNKNOWN
    fns = [tri(p) for p in parts]
    if conj_of:

        def conj(a: ArchFacts) -> bool | None:
            values = [f(a) for f in fns]
            return False if False in values else (None if None in values else True)

        return Sym("pred", conj, names)

    def disj(a: ArchFacts) -> bool | None:
        values = [f(a) for f in fns]
        return True if True in values else (None if None in values else False)

    return Sym("pred", disj, names)


def _eval_compare(node: ast.Compare, ctx: Context) -> Sym:
    if ctx.given and len(node.ops) == 1:
        assumed = _assumed(node, ctx.given)
        if assumed is not None:
            return Sym("const", assumed)
    recent = _recent_cuda(node, ctx)
    if recent is not None:
        return recent
    operands = [_eval(n, ctx) for n in [node.left, *node.comparators]]
    if all(o.kind == "const" for o in operands):  # `torch.version.hip is None`
        if any(type(op) not in _CMP and not isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return UNKNOWN
        values = [o.value for o in operands]
        pairs = zip(node.ops, values, values[1:], strict=False)
        return Sym("const", all(_const_compare(op, a, b) for op, a, b in pairs))
    preds: list[Callable[[ArchFacts], bool]] = []
    names: tuple[str, ...] = ()
    for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
        fn = _CMP.get(type(op))
        if fn is None:
            return UNKNOWN
        pred = _compare_pair(fn, left, right, isinstance(op, (ast.In, ast.NotIn)))
        if pred is None:
            return UNKNOWN
        preds.append(pred)
        names += left.names + right.names
    return Sym("pred", lambda a: all(p(a) for p in preds), names)


def _assumed(node: ast.Compare, given: frozenset[str]) -> bool | None:
    """`x == "fa3"` / `"fa3" in (p, d)` / `x in ("fa3", "fa4")` when "fa3" is given: True (their
    negations False); None when the comparison is not about a given string."""
    sides = [node.left, node.comparators[0]]
    for side in sides:
        items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
        if any(isinstance(i, ast.Constant) and i.value in given for i in items):
            op = node.ops[0]
            if isinstance(op, (ast.Eq, ast.In)):
                return True
            if isinstance(op, (ast.NotEq, ast.NotIn)):
                return False
    return None


def _const_compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    if isinstance(op, ast.Is):
        return left is right
    if isinstance(op, ast.IsNot):
        return left is not right
    return bool(_CMP[type(op)](left, right))


def _compare_pair(
    fn: Callable[[Any, Any], Any], left: Sym, right: Sym, membership: bool = False
) -> Callable[[ArchFacts], bool] | None:
    def side(s: Sym, other: Sym) -> Callable[[ArchFacts], Any] | None:
        if s.kind == "cap":
            return s.value
        if s.kind == "const":
            return lambda a, v=s.value: v
        if s.kind == "namecap" and other.kind == "const":
            sample = other.value
            if membership:  # `x in (90, 100)`: the collection's items say the spelling
                if not isinstance(sample, (tuple, list, set, frozenset)) or not sample:
                    return None
                sample = next(iter(sample))
            if _cc_like(sample):
                return lambda a, o=sample: namecap_value(o, a)
        return None

    lf, rf = side(left, right), side(right, left)
    if lf is None or rf is None or (left.kind == "const" and right.kind == "const"):
        return None
    return lambda a: bool(fn(lf(a), rf(a)))


def _cc_like(value: Any) -> bool:
    """Could this constant be (a collection of) compute capabilities?"""
    from capgap.arch import try_parse_arch
    from capgap.arch.spelling import arch_shaped

    if isinstance(value, bool):
        return False
    if isinstance(value, (int, str)) or _is_cc_tuple(value):
        text = str(value) if not isinstance(value, tuple) else f"{value[0]}.{value[1]}"
        # `(10, 7)` (Rubin) is no arch of the facts, yet every known one compares False with it
        plain_major = isinstance(value, int) and value < 20  # `x == 1` is no arch of its own
        return try_parse_arch(text) is not None or (not plain_major and arch_shaped(text))
    return False
