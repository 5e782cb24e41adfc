"""What one file contributes to a scan, before any arch is considered.

Extraction is a pure function of a file's bytes, so these records are what the content-hash
cache stores; the rules evaluate them against the target archs afterwards (cheap), across files
(a table defined in one module and read, with a capability key, in another).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

from capgap.arch import ArchFacts
from capgap.judging.sizesaid import SizeSaid
from capgap.judging.symbolic import UNKNOWN, Context, Sym, evaluate, tri
from capgap.judging.tileconfigs import TileConfig


@dataclass
class Scope:
    """Assignments visible at a point: `name -> expr` for a function, its class, its module."""

    names: dict[str, ast.expr] = field(default_factory=dict)
    parent: Scope | None = None

    def lookup(self, name: str) -> ast.expr | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


@dataclass
class TableKey:
    text: str  # as written: `9`, `"9.0"`, `(9, 0)`
    cc: str  # "9.0"
    value: Any = None  # the entry's value with simple constants resolved, when JSON-able


@dataclass
class TableDef:
    symbol: str  # qualified within its module: NAME, Class.NAME, func.NAME
    name: str
    line: int
    style: str  # major-int | number-int | dotted-str | sm-str | tuple
    keys: list[TableKey]
    named_like_arch: bool  # the name or a comment beside it speaks of archs
    source: str
    # what the comment block beside it states the keyed code needs (judging.remarks)
    needs: list[tuple[str, ...]] = field(default_factory=list)
    needs_from: list[str] = field(default_factory=list)
    remark: str = ""  # the comment paragraph above it and the comments on its lines (judging.tablereads)
    end: int = 0  # its last line


@dataclass
class TableUse:
    name: str  # the table's last name (`_WORLD_SIZES_MULTIMEM` for `self._WORLD_SIZES_MULTIMEM`)
    line: int
    access: str  # subscript | get | in | try
    key: ast.expr
    scope: Scope
    consequence: str  # what a missing key does here, "{arch}" left to fill
    denies: bool = False  # `if cap in T: raise/return`: a hit refuses, so a missing key is no gap
    effect: str = ""  # "lifted": a missing key only skips a restriction (judging.tablereads)
    function: int = 0  # the line of the def it is read in (0: module level or unknown)


@dataclass
class HelperDef:
    """A function or module variable whose value may be a capability predicate."""

    name: str
    kind: str  # "def" | "var"
    params: list[str]
    body: list[ast.stmt]  # var: [ast.Expr(value)]; def: parsed from `source` when first needed
    scope: Scope
    method: bool = False  # a method is only what `obj.name()` calls, never a bare `name()`
    # def: its whole text (its decisions matter: guard clauses, several returns), or, where that
    # does not parse alone, its returns and assignments. A scan finds over a thousand candidate
    # helpers and a few hundred are ever called; text crosses from the worker processes far
    # cheaper than syntax trees, and only the called ones are parsed.
    source: tuple[str, ...] = ()

    def statements(self) -> list[ast.stmt]:
        if not self.body and self.source:
            if len(self.source) == 1 and self.source[0].lstrip().startswith(("def ", "async def ")):
                try:
                    node = ast.parse(textwrap.dedent(self.source[0])).body[0]
                except SyntaxError:  # a multi-line string dedent cannot line up: no decision read
                    return []
                self.body = list(node.body)  # type: ignore[attr-defined]
            else:
                self.body = [ast.parse(text).body[0] for text in self.source]
        return self.body

    def evaluate(self, args: list[Sym], kwargs: dict[str, Sym], ctx: Context) -> Sym:
        """What the helper gives for these arguments. Without arguments, what it gave before in
        the same standing (depth, recursion guard, givens) is given again where every name it read
        from the caller's scope and every helper name it had resolved are still the same objects:
        the evaluation is a function of those alone, and one helper is asked by many decisions."""
        if ctx.memo is None or args or kwargs:
            return self._evaluate(args, kwargs, ctx)
        key = (id(self), ctx.alias, ctx.depth, frozenset(ctx.seen), ctx.given)
        earlier = ctx.memo.setdefault(key, [])
        for helper, reads, resolved, result in earlier:
            if (
                helper is self
                and all(ctx.lookup(name) is found for name, found in reads)
                and all(ctx.helper(name) is found for name, found in resolved)
            ):
                return result  # type: ignore[no-any-return]
        got: list[tuple[str, Any]] = []
        named: list[tuple[str, Any]] = []
        outer_lookup, outer_helper = ctx.lookup, ctx.helper

        def lookup(name: str) -> Any:
            found = outer_lookup(name)
            got.append((name, found))
            return found

        def helper_named(name: str) -> Any:
            found = outer_helper(name)
            named.append((name, found))
            return found

        result = self._evaluate(args, kwargs, replace(ctx, lookup=lookup, helper=helper_named))
        earlier.append((self, tuple(got), tuple(named), result))
        return result

    def refusal(self, ctx: Context, arch: ArchFacts) -> ast.Raise | None:
        """The raise a guard clause of the body's top level reaches on `arch` (`if arch not in
        SUPPORTED_ARCHES: raise NotImplementedError(...)`), when the test holds for it."""
        if self.kind != "def":
            return None
        local = Scope({}, self.scope)
        steps = _compile(self.statements(), local, ctx.deeper(_lookup(local, {}, ctx)), [])
        for step in steps:
            if step[0] != "if":
                continue
            then = step[2]
            if tri(step[1])(arch) is True and then and then[0][0] == "ret" and len(then[0]) > 2:
                return then[0][2]  # type: ignore[no-any-return]
        return None

    def _evaluate(self, args: list[Sym], kwargs: dict[str, Sym], ctx: Context) -> Sym:
        if self.kind == "var":
            return self._evaluate_var(self.body[0].value, ctx)  # type: ignore[attr-defined]
        bound: dict[str, Any] = dict(zip(self.params, args, strict=False))
        bound.update({k: v for k, v in kwargs.items() if k in self.params})
        local = Scope({}, self.scope)
        return self._run(self.statements(), bound, local, ctx)

    def _evaluate_var(self, value: ast.expr, ctx: Context) -> Sym:
        # lru_cache(maxsize=1)(partial(f, majors=[10])) / functools.cache(f) / partial(f, ...)
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(value, ast.Call) and _last(value.func) == "partial" and value.args:
            target = _last(value.args[0])
            helper = ctx.helper(target)
            if helper is None or helper is self:
                return UNKNOWN
            sub = ctx.deeper()
            args = [evaluate(a, sub) for a in value.args[1:]]
            kwargs = {k.arg: evaluate(k.value, sub) for k in value.keywords if k.arg}
            return helper.evaluate(args, kwargs, sub)
        if isinstance(value, ast.Lambda):
            return self._run([ast.Return(value.body)], {}, Scope({}, self.scope), ctx)
        scope = self.scope
        return evaluate(value, ctx.deeper(_lookup(scope, {}, ctx)))

    def _run(self, body: list[ast.stmt], bound: dict[str, Any], local: Scope, ctx: Context) -> Sym:
        """The helper's returns as one decision: which value each arch can get back. A capability
        value returned (`return major * 10 + minor`) wins as it is; else a three-valued predicate."""
        sub = ctx.deeper(_lookup(local, bound, ctx))
        returned: list[Sym] = []
        steps = _compile(body, local, sub, returned)
        caps = [r for r in returned if r.kind == "cap"]
        if caps:
            return caps[0]
        if not any(r.kind == "pred" for r in returned) and not _tests_arch(steps):
            return UNKNOWN
        names = tuple(n for r in returned if r.kind == "pred" for n in r.names)

        def answer(a: ArchFacts) -> bool | None:
            values, falls = _outcomes(steps, a)
            if falls:
                values.add(False)  # falling off the end returns None
            return values.pop() if len(values) == 1 else None

        return Sym("pred", answer, names)


# A compiled helper body: ("ret", Sym) or ("if", test, then-steps, else-steps).
Step = tuple[Any, ...]


def _compile(body: list[ast.stmt], local: Scope, ctx: Context, returned: list[Sym]) -> list[Step]:
    steps: list[Step] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            bind(local, stmt.targets, stmt.value)
        elif isinstance(stmt, ast.Return):
            sym = evaluate(stmt.value, ctx) if stmt.value is not None else Sym("const", None)
            returned.append(sym)
            steps.append(("ret", sym))
            break  # what follows a return never runs
        elif isinstance(stmt, ast.Raise):
            steps.append(("ret", Sym("const", False), stmt))  # (the raise kept: `HelperDef.refusal`)
            break
        elif isinstance(stmt, ast.If):
            test = evaluate(stmt.test, ctx)
            then = _compile(stmt.body, local, ctx, returned)
            other = _compile(stmt.orelse, local, ctx, returned)
            steps.append(("if", test, then, other))
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.Try)):
            steps.extend(_compile(stmt.body, local, ctx, returned))
    return steps


def _tests_arch(steps: list[Step]) -> bool:
    return any(
        s[0] == "if" and (s[1].kind == "pred" or _tests_arch(s[2]) or _tests_arch(s[3])) for s in steps
    )


def _outcomes(steps: list[Step], a: ArchFacts) -> tuple[set[bool | None], bool]:
    """The values a body can return on arch `a`, and whether it can fall through."""
    values: set[bool | None] = set()
    for step in steps:
        if step[0] == "ret":
            values.add(_truth(step[1], a))
            return values, False
        taken = tri(step[1])(a)
        branches = [step[2]] if taken is True else [step[3]] if taken is False else [step[2], step[3]]
        falls = False
        for branch in branches:
            got, through = _outcomes(branch, a)
            values |= got
            falls |= through
        if not falls:
            return values, False
    return values, True


def _truth(sym: Sym, a: ArchFacts) -> bool | None:
    if sym.kind == "pred":
        value = sym.value(a)
        return None if value is None else bool(value)
    if sym.kind == "const":
        return bool(sym.value)
    return None


def _lookup(scope: Scope, bound: dict[str, Any], ctx: Context) -> Any:
    def find(name: str) -> Any:
        if name in bound:
            return bound[name]
        found = scope.lookup(name)
        return found if found is not None else ctx.lookup(name)

    return find


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def bind(scope: Scope, targets: list[ast.expr], value: ast.expr) -> None:
    """Record `name = value`, `a, b = value` (as value[0], value[1]) and `self.x = value`."""
    for target in targets:
        if isinstance(target, ast.Name):
            scope.names.setdefault(target.id, value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            if target.value.id in {"self", "cls"}:
                scope.names.setdefault(f"{target.value.id}.{target.attr}", value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                    scope.names.setdefault(elt.id, item)


@dataclass
class Arm:
    """One outcome of a decision: the test that selects it (None: the else, or the rest of the
    block after guard clauses) and what it does there."""

    test: ast.expr | None
    line: int
    action: str  # error | reject | positive | nothing (see judging.outcomes)
    summary: str  # a few words: "raises ValueError('...')", "returns 'triton'"
    needs: list[tuple[str, ...]]  # features its code evidently needs
    evidence: list[str]  # what each need was read from ("tcgen05 in line 120")
    source: str = ""  # its line of source (an elif's, a guard's)
    body: tuple[int, int] = (0, 0)  # the file lines its statements span; (0, 0): none or unknown
    archs: tuple[str, ...] = ()  # the arch numbers its code names (`load_sm120_kernel`: "120")
    # a refusal's words naming the archs it requires ("requires SM100/SM103", "Hopper-only")
    stated: str = ""
    # the other modules its code calls into (judging.callees): where the kernels it runs live
    reaches: tuple[str, ...] = ()
    # words in its own strings that name archs ("Use trtllm_mla ... on SM100/SM103.")
    said: str = ""
    # sentences naming archs in its comments, those above its first statement included
    notes: tuple[str, ...] = ()
    # the members of enum-like classes its code picks (`Backends.FAST_MHA`), judged by the check of
    # the class each names (judging.backends)
    picks: tuple[str, ...] = ()
    # the rounding functions it sizes with when that is all it does (`n = round_up(n, 256)`)
    sizes: tuple[str, ...] = ()
    # the strings its code gives settings (`backend = "trtllm_mla"`, `return {"x": "fa4"}`): names
    # a registry may map to the code they run (judging.named)
    values: tuple[str, ...] = ()
    # the values, each with the setting it is given to (`fp8_gemm_runner_backend=flashinfer_cutedsl`):
    # what a check of the value must be about to speak of this path (judging.validations)
    settings: tuple[str, ...] = ()
    # what an assert in it demands of a setting ("attention_backend:triton", one per value it
    # accepts): the engine's own check of that setting where the arm is taken (judging.demands)
    demands: tuple[str, ...] = ()
    # what its own statements refuse of the call (`assert page_table is None, "Paged KV not
    # supported on SM 12.0"`), as "line\ttest\tmessage" (judging.refusals)
    refusals: tuple[str, ...] = ()
    # the modules its own code imports or names through an import, not through a function it calls
    # (`import vllm._deepselect_C`): a compiled one's images say what the arm loads (judging.extensions)
    uses: tuple[str, ...] = ()
    # the torch ops its code calls or its test asks for (`hasattr(torch.ops._C, "x")`): the images
    # of the tree's libraries that hold their kernels say what it runs (judging.opkernels)
    ops: tuple[str, ...] = ()


@dataclass
class Decision:
    """An arch decision whole: an if/elif/else chain, a run of guard clauses and the rest of the
    block, a conditional expression, an assert, a flag, a helper's return."""

    line: int
    kind: str  # chain | guards | ifexp | assert | flag | return | skipif
    arms: list[Arm]
    scope: Scope
    source: str
    context: str  # enclosing qualname
    end: int = 0  # the last line of its tests
    rest: tuple[int, int] = (0, 0)  # guard clauses: the file lines only archs that pass them reach
    # what the comments above it and on its tests state a path needs (judging.remarks)
    needs: list[tuple[str, ...]] = field(default_factory=list)
    needs_from: list[str] = field(default_factory=list)
    # the strings its tests and the tests around it compare a setting with (`backend == "trtllm_mha"`):
    # what it validates (judging.validations)
    subjects: tuple[str, ...] = ()
    # the settings the if-tests it sits in require, each as the strings one of which it must be
    # (`if decode_backend == "fa3":` -> ("fa3",)): a name the target is refused makes it unreachable there
    within: tuple[tuple[str, ...], ...] = ()
    # the settings the if-tests it sits in ask to be unset (`if self.attention_backend is None:`):
    # what it sets of them is their default
    unset: tuple[str, ...] = ()
    # sentences naming archs in the prose around it: the docstrings of the function and class it
    # sits in, the comments above it and at the function's start ("where\tsentence")
    prose: tuple[str, ...] = ()
    # the needs the docstrings and leading comments of the enclosing defs and classes state
    # ("only run on the trtllm-gen dynamic kernel"), innermost first (judging.surroundings)
    opening: list[tuple[str, ...]] = field(default_factory=list)
    opening_from: list[str] = field(default_factory=list)
    # the modules whose constants its tests read (`tp_size in SUPPORTED_TP_SIZES`, imported from the
    # kernel's module): the limits of that module's path, which it guards (judging.named)
    asks: tuple[str, ...] = ()
    # `name=function` when the statement before it gives a variable a default resolver's answer
    # (`fallback = get_fallback_backend()`): an arm setting that variable corrects the resolver
    prior: str = ""
    # what the comments above it and in its arms say a value it gives needs of shared memory
    # ("num_stages=4 needs 108 KB": judging.sizesaid)
    sizes: tuple[SizeSaid, ...] = ()


@dataclass
class FeatureGuard:
    """`if handle.multicast_ptr == 0: return`: a check of a hardware feature that turns a path off
    whatever the arch tables say (what a table fix leaves in the way)."""

    line: int
    source: str
    needs: list[tuple[str, ...]]
    context: str
    function: int = 0  # the line of the def it sits in (0: module level or unknown)
    # its test is one negative check of the feature (`== 0`, `not`, `is None`) and its block
    # leaves (returns, raises, sets `disabled = True`): it turns the path off by itself
    turns_off: bool = False


@dataclass
class BuildList:
    line: int
    symbol: str  # TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES, cuda_archs
    archs: list[str]  # as written
    source: str
    sources: list[str] = field(
        default_factory=list
    )  # the .cu files the list compiles (CMake: named below it)
    needs: list[tuple[str, ...]] = field(default_factory=list)  # what most of those sources need
    needs_from: list[str] = field(default_factory=list)
    function: str = ""  # a JIT list: the function that builds the module (gen_x_sm90_module)
    within: str = ""  # a Python module's list: the module-level function it is written in


@dataclass(frozen=True)
class KernelSpecEntry:
    """One kernel registered for an op with the CUDA archs it declares it runs on
    (`KernelSpec(op="gemm.dual_gemm_swiglu", backend=KernelBackend.CUTE_DSL, target="pkg.mod:fn",
    capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(10, 0), max_sm=(10, 9))}))`)."""

    op: str
    backend: str  # the provenance named (`CUTE_DSL`), "" when none is
    target: str  # the dotted callable it loads (`pkg.mod.fn`), "" when none is named
    line: int
    # inclusive (major, minor) windows, None for an open end ((None, None): any CUDA device; ():
    # no CUDA device, another kind's kernel)
    windows: tuple[tuple[tuple[int, int] | None, tuple[int, int] | None], ...]
    source: str
    description: str = ""  # what the registration says the kernel is ("... with PDL.")


@dataclass(frozen=True)
class ClassBound:
    """`CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)` in a class body: a bound on the GPUs an operator
    class serves, which a method of a base class compares the device with (`cls.NAME`)."""

    cls: str
    name: str
    value: tuple[int, int]
    line: int
    source: str
    needs: tuple[tuple[str, ...], ...] = ()  # what the class's module evidently needs
    needs_from: tuple[str, ...] = ()


# how `FileFacts.kernels` begins where the kernel code read is the module's own Python
# (`@cute.kernel`, `@triton.jit`), not the `.cu` sources it names
OWN_KERNEL_CODE = "its own @"


@dataclass
class FileFacts:
    path: str  # relative to the target root
    module: str
    tables: list[TableDef] = field(default_factory=list)
    uses: list[TableUse] = field(default_factory=list)
    helpers: list[HelperDef] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # `{"is_sm90": "is_sm90_supported"}` tables
    # what the module itself evidently needs, read from its imports (`cutlass.cute.nvgpu.tcgen05`),
    # its path, its comments and its own kernel code (`prims.tcgen05_fence(...)`)
    needs: list[tuple[str, ...]] = field(default_factory=list)
    needs_from: list[str] = field(default_factory=list)
    guards: list[FeatureGuard] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the `.cu` / `.cuh` it names (`{...}` as `*`)
    builds: list[BuildList] = field(default_factory=list)
    module_scope: Scope = field(default_factory=Scope)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> "pkg.module" it came from
    siblings: list[str] = field(default_factory=list)  # modules of its own package it imports
    # the kernel code its needs were read from, when some was ("its own @cute.kernel code", "3 of
    # the sources it names"): a module whose kernels were read and need nothing the target lacks
    # looks portable, whatever its refusals say
    kernels: str = ""
    # each top-level function of the module that calls into a kernel library whose name says what
    # its kernels need -> that call and its line (`bf16_mega_gate` -> "'deep_gemm.bf16_mega_gate'
    # (line 35)"): what a path using that function runs (judging.callees)
    entries: dict[str, str] = field(default_factory=dict)
    # each top-level function or module variable -> the modules it names by string (`"flashinfer.
    # cute_dsl.blockscaled_gemm"` in `has_flashinfer_cutedsl_grouped_gemm_nt_masked`, handed to
    # importlib; `x = _lazy_import_wrapper("flashinfer.gemm", "mm_fp4")`): what a path using it loads
    named_modules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # does the module ask the GPU it runs on (a capability query, a platform object, an `is_sm90`
    # helper)? A module that never does tests archs it is given: a kernel spec's, a caller's
    asks_device: bool = True
    # literal Triton launch configs of a module with its own tl.dot kernel, and then its call graph
    # (judging.tileconfigs)
    tile_configs: list[TileConfig] = field(default_factory=list)
    calls: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the names its decorators register functions under (`@register_attention_backend("trtllm_mla")`)
    # -> the modules each function imports to run (judging.named)
    registered: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # ... and the function each name registers (`"fa3"` -> `create_flashattention_v3_backend`)
    factories: dict[str, str] = field(default_factory=dict)
    # what its code spells anywhere (names, strings, comments; predicate names aside) that a kernel
    # family needs (`trtllm_gen`), each with where, and the archs it names (`sm120`: "12.0", `SM12x`:
    # "12"): what a backend it is the module of runs (judging.named)
    spelled: list[tuple[str, ...]] = field(default_factory=list)
    spelled_from: list[str] = field(default_factory=list)
    names_archs: tuple[str, ...] = ()
    # kept only for what it registers or spells (judging.named): a module the pre-filter would
    # pass over, which the callees do not read (they read its path, as of any module unread)
    named_only: bool = False
    # the functions of its own each of its functions is or-ed with (`return _varlen_ok() or
    # _flattened_ok()`): a caller's yes one predicate leaves out, the other may give
    either: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the kernels it registers for ops with the CUDA archs each declares (judging.kernel_specs)
    kernel_specs: list[KernelSpecEntry] = field(default_factory=list)
    # `get_mla_decode_arch(cc)` or `n, m = get_arch_constraints(cc)` in a function's body: a call of
    # a function of this module that may raise for an arch, as (the caller's qualname, the call's line,
    # the caller's last line, the callee); where the callee raises for an arch, what follows is
    # never reached there (judging.rules)
    checks: list[tuple[str, int, int, str]] = field(default_factory=list)
    # its private functions (`_pick_tile`) -> the (qualname, line) of each call of the module's own,
    # where those are all it has (judging.callsites): a decision in one the target calls only past a
    # refusal is never reached there
    callers: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    # the private names it calls on another object (`kda_cute._run_prefill(q)`): callers of another
    # module's private functions, which that module's own text does not show (judging.callsites)
    private_calls: tuple[str, ...] = ()
    loads_by_name: bool = False  # does it import modules named in strings (`import_module(f"...")`)?
    # class-level capability bounds (judging.classbounds), and how this module's methods compare
    # the device with such a name: name -> "upper" (`cap > cls.NAME`) or "lower" (`cap < cls.NAME`)
    class_bounds: list[ClassBound] = field(default_factory=list)
    bound_checks: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (side, line)
    # its imports inside the block of an `if`, as "line\ttest\tmodules" (judging.gatedimports): where
    # the target fails each test, what only those load is code it never runs (judging.unreached)
    gated_imports: tuple[str, ...] = ()
    top_imports: tuple[str, ...] = ()  # the modules its module-level imports name: loaded with it
    # `self.X` -> what a method imports past `if not self.X: raise` (judging.flagguards)
    flag_imports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    skipped: str = ""  # reason, when the file could not be read or parsed
