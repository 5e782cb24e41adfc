"""What one outcome of a decision does, read from its statements: the polarity of a branch.

`error`: raises, fails an assert, exits. `reject`: turns the caller away without an error (returns
False / None / a refusal string, skips the item, adds the GPU to an unsupported list, switches a
feature off, warns that it is deprecated or unsupported). `nothing`: no statement. `positive`: all
else (returns True, picks a backend, calls a kernel). Being left out of an error or a reject is
good for an arch; being left out of a positive outcome is what a gap is. In a function that
answers with reasons (a string why not, None for yes) None accepts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeGuard

from capgap.judging.statements import short, summary
from capgap.judging.symbolic import call_name

_REFUSAL = re.compile(
    r"not (?:be )?supported|unsupported|not available|unavailable|requires?|needs?\b"
    r"|only (?:on|for|supported|supports?\b)|\bis not\b|\bnot an?\b|deprecat|disabl|fall(?:ing)? ?back"
    r"|not implemented"
    r"|cannot|can't|incompatible|skip|\boff\b",
    re.I,
)
_DENY_LIST = re.compile(
    r"unsupported|not_supported|blocked|blocklist|deny|denied|skip|disabled?|exclude|incompatible|broken",
    re.I,
)
_LOGS = {"warning", "warn", "warning_once", "info", "info_once", "debug", "error", "print", "warn_once"}


def classify(body: list[ast.stmt]) -> tuple[str, str]:
    """(action, summary) of a branch body."""
    stmts = [s for s in body if not is_filler(s)]
    if not stmts:
        return "nothing", "does nothing"
    what = summary(stmts) or _first_words(stmts)
    last = stmts[-1]
    if isinstance(last, ast.Raise):
        if _returns_a_value(stmts[:-1]):
            # `if minor == 0: return (12, "0f")` ... `raise RuntimeError(...)`: the raise is what
            # is left when none of its own cases matched; the branch serves the arch
            return "positive", what
        return "error", _raise_text(last)
    if isinstance(last, ast.Assert) and _is_false(last.test):
        return "error", "fails an assert"
    exiting = isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    if exiting and call_name(last.value.func) in {"exit", "_exit", "abort"}:  # type: ignore[attr-defined]
        return "error", "exits"
    if isinstance(last, ast.Return) and _refusing_value(last.value):
        return "reject", what
    if isinstance(last, ast.Continue):
        return "reject", what
    if all(_only_reasons(s) for s in stmts):
        return "reject", what
    if all(_only_logs(s) for s in stmts):  # "X is not fully optimized yet": a log line changes no path
        return "nothing", what
    if all(_only_copies(s) for s in stmts):  # a kernel's layout demand met by a copy: no path, a cost
        return "nothing", "only copies tensors (" + what + ")"
    if all(_only_copies(s) or _only_reshapes(s) for s in stmts):  # a layout for a kernel picked elsewhere
        return "positive", RESHAPES + what + ")"
    if all(
        _switches_off(s) or _logs_refusal(s) or _denies(s) or _validates(s) or _says_why_not(s) for s in stmts
    ):
        return "reject", what
    if any(_logs_refusal(s) for s in stmts):  # "X needs SM120; falling back to cuDNN SDPA", then a pick
        return "reject", what
    return "positive", what


def _returns_a_value(stmts: list[ast.stmt]) -> bool:
    """Does a nested branch return something that is no refusal?"""
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Return) and node.value is not None and not _refusing_value(node.value):
                return True
    return False


def _only_logs(stmt: ast.stmt) -> bool:
    """A log line, or an if whose branches only log."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return call_name(stmt.value.func).split(".")[-1] in _LOGS
    if isinstance(stmt, ast.If):
        return all(_only_logs(s) for s in [*stmt.body, *stmt.orelse])
    return False


# `x.contiguous()`, `x.clone()`: the same tensor in new memory
_COPIES = frozenset({"contiguous", "clone"})
# ... and the same data in another shape (`x.view(-1, 1).expand(-1, n)`)
_RESHAPES = _COPIES | {
    "view", "reshape", "expand", "expand_as", "view_as", "unsqueeze", "squeeze", "flatten",
    "unflatten", "transpose", "permute", "t",
}  # fmt: skip
RESHAPES = "only reshapes tensors ("  # how such a branch's summary starts
# The outcome of a flag decision (`ok = major >= 10`) that sets it, as extraction words it: the flag
SETS_FLAG = re.compile(r"^sets ([\w.]+) = True$")


def _only_copies(stmt: ast.stmt) -> bool:
    """`q, k, v = [x.contiguous() for x in (q, k, v)]`, `x = x.clone()`: a branch of such statements
    makes what some kernel of the GPUs taking it demands (Transformer Engine's FA4 D=256 SM10x
    kernels want packed K/V). The GPUs it leaves out skip a copy and lose no path."""
    if not isinstance(stmt, ast.Assign):
        return False
    value = stmt.value
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        values: list[ast.expr] = [value.elt]
    elif isinstance(value, (ast.List, ast.Tuple)):
        values = list(value.elts)
    else:
        values = [value]
    return bool(values) and all(
        isinstance(v, ast.Call)
        and isinstance(v.func, ast.Attribute)
        and v.func.attr in _COPIES
        and not v.args
        and not v.keywords
        for v in values
    )


def _only_reshapes(stmt: ast.stmt) -> bool:
    """`return lens.view(-1, 1).expand(-1, n).contiguous()`, `q = q.view(b, s, h, d)`: an input handed
    on in the shape some kernel of the GPUs taking the branch reads (SGLang's [B, next_n] schedule
    for DeepGEMM's MQA logits). Which kernel runs is decided, and judged, where it is picked."""
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        return _reshaped(stmt.value)
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _reshaped(stmt.value)


def _reshaped(value: ast.expr) -> bool:
    """A chain of shape and copy methods on a plain name or attribute (`lens.view(-1, 1)`)."""
    steps = 0
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr not in _RESHAPES:
            return False
        value, steps = value.func.value, steps + 1
    return steps > 0 and isinstance(value, (ast.Name, ast.Attribute))


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def is_filler(stmt: ast.stmt) -> bool:
    """A docstring, a bare constant or `pass`: a statement that does nothing in a branch."""
    return _is_docstring(stmt) or isinstance(stmt, ast.Pass)


def _is_false(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value


def _raise_text(stmt: ast.Raise) -> str:
    exc = stmt.exc
    if exc is None:
        return "raises again"
    name = call_name(exc.func) if isinstance(exc, ast.Call) else call_name(exc)
    message = ""
    if isinstance(exc, ast.Call) and exc.args:
        message = _message(exc.args[0])
    return f"raises {name or 'an exception'}" + (f" '{short(message, 80)}'" if message else "")


def message_of(node: ast.expr | None) -> str:
    """The words of an assert's or exception's message ("" when it has none we can read)."""
    return "" if node is None else _message(node)


def _message(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) else "{...}" for v in node.values if isinstance(v, ast.AST)
        )
    return ""


# Per function being read: does it answer with reasons (`def why_not(...) -> str | None`: a
# string says why not, None says yes)? There `return None` accepts.
_REASONS: list[bool] = [False]
# Per function being read: its reason variables (reason_names), whose None is a yes.
_REASON_NAMES: list[frozenset[str]] = [frozenset()]
# Per function being read: is it a predicate named for a restriction (`is_int4_deprecated`,
# `_is_unsupported`, `should_skip_x`)? Its True restricts (issue 14, point 2: polarity).
_NEGATIVE: list[bool] = [False]
_RESTRICTION_NAME = re.compile(
    r"deprecat|unsupported|not_supported|broken|blocked|blocklist|denied|disabled?(?:_|$)|incompatible"
    r"|(?:^|_)skip(?:_|$)|(?:^|_)skips?_",
    re.I,
)
# "kv_cache_dtype not supported", f"page_size={n}", "not_verify_route:backend"; not a name-like
# answer (`"sm120"`, `"triton"`): a function of those and None picks, and None is its own answer
_REASON_WORDS = re.compile(r"\s|=|:")


def answers_with_reasons(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does every return of `fn` (not of its nested defs) give a string or None, with at least one
    None and one string that reads as a reason? (FlashInfer's `_eagle_verify_..._plan_eligibility`:
    `return f"page_size={n}"` ... `return None`.)"""
    strings = nones = 0
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            value = node.value
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                nones += 1
            elif _a_string(value):
                strings += _reads_as_reason(value)
            else:
                return False
        todo.extend(ast.iter_child_nodes(node))
    return strings > 0 and nones > 0


def reason_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names `fn` sets both to None and to a sentence (vLLM's Kimi-K3 GEMM-AR check: `reason =
    "the device is not SM100-family"` ... `else: reason = None`, then `if reason is not None:
    return False`): there a string says why not and None says yes. Statements only, not nested
    defs."""
    nones: set[str] = set()
    sentences: set[str] = set()
    todo: list[ast.stmt] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and (name := _target_name(node)):
            if isinstance(node.value, ast.Constant) and node.value.value is None:
                nones.add(name)
            elif _a_string(node.value) and " " in _message(node.value).strip():
                sentences.add(name)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, ()))
    return frozenset(nones & sentences)


@contextmanager
def reading(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, may_reason: bool = True, may_keep_reasons: bool = True
) -> Iterator[None]:
    """Branches classified inside `fn` read its returns and its reason variables as it means them
    (answers_with_reasons, reason_names). `may_reason`, `may_keep_reasons`: False where the file
    returns no string literal, or sets no name to one (nothing to walk for)."""
    _REASONS.append(may_reason and answers_with_reasons(fn))
    _REASON_NAMES.append(reason_names(fn) if may_keep_reasons else frozenset())
    _NEGATIVE.append(bool(_RESTRICTION_NAME.search(fn.name)))
    try:
        yield
    finally:
        _REASONS.pop()
        _REASON_NAMES.pop()
        _NEGATIVE.pop()


def _only_reasons(stmt: ast.stmt) -> bool:
    """In a function that answers with reasons, an `if` whose branches only give reasons: `if
    head_size == 64: return "fa2 prefill misreads an NVFP4 KV cache"` is a restriction, no path,
    whatever its words."""
    if not _REASONS[-1] or not isinstance(stmt, ast.If):
        return False
    for branch in (stmt.body, stmt.orelse):
        if all(isinstance(x, ast.If) for x in branch):
            if not all(_only_reasons(x) for x in branch):
                return False
            continue
        last = [x for x in branch if not _is_docstring(x)][-1:]
        if not (last and isinstance(last[0], ast.Return) and _a_reason(last[0].value)):
            return False
    return True


def _a_reason(value: ast.expr | None) -> bool:
    """A string that reads as a reason (`f"page_size={n}"`, "fa2 prefill misreads ..."), or a
    refusal of any other kind."""
    return _reads_as_reason(value) if _a_string(value) else _refusing_value(value)


def named_for_a_restriction() -> bool:
    """Is the function being read a predicate named for a restriction (`is_int4_deprecated`)?"""
    return _NEGATIVE[-1]


def _a_bool(value: ast.expr | None) -> TypeGuard[ast.Constant]:
    return isinstance(value, ast.Constant) and isinstance(value.value, bool)


def _a_string(value: ast.expr | None) -> TypeGuard[ast.expr]:
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    return isinstance(value, ast.JoinedStr)


def _reads_as_reason(value: ast.expr) -> bool:
    """Does a string say why not (`f"page_size={n}"`), not name an answer (`"sm120"`)?"""
    return bool(_REASON_WORDS.search(_message(value)))


def _refusing_value(value: ast.expr | None) -> bool:
    if _NEGATIVE[-1] and _a_bool(value):  # `def is_int4_deprecated(): ... return True`: its yes restricts
        return value.value
    none = value is None or (isinstance(value, ast.Constant) and value.value is None)
    if none and _REASONS[-1]:  # where a string says why not, None is no reason: a yes
        return False
    if value is None:
        return True
    if isinstance(value, ast.Constant):
        v = value.value
        if v is None or v is False or v == "" or v == 0:
            return True
        return isinstance(v, str) and bool(_REFUSAL.search(v))
    if isinstance(value, ast.JoinedStr):
        return bool(_REFUSAL.search(_message(value)))
    if isinstance(value, ast.Tuple) and value.elts:  # `return False, "needs SM90"`
        return _refusing_value(value.elts[0])
    # `return []`, `return {}`: nothing to offer (no configs, no warm-up shapes)
    return isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and not getattr(
        value, "elts", getattr(value, "keys", None)
    )


_ONE_OF = re.compile(r"(?:^|_)(?:splits?|split_?k|stages|warps|ctas|chunks)$", re.I)


def _switches_off(stmt: ast.stmt) -> bool:
    """`use_x = False`, `self.enabled = None`, `x = 0`, and `num_splits = 1` / `split_k = 1` /
    `NUM_STAGES = 1` (pipelining or splitting turned off), and a config copied with features off.
    `reason = None` of a reason variable says yes."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Constant):
        if (
            stmt.value.value is None
            and isinstance(stmt, ast.Assign)
            and _target_name(stmt) in _REASON_NAMES[-1]
        ):
            return False
        if stmt.value.value in (None, False, 0):
            return True
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return stmt.value.value == 1 and any(_ONE_OF.search(ast.unparse(t)) for t in targets)
    return isinstance(stmt, ast.Assign) and _replaced_off(stmt.value)


def _replaced_off(value: ast.expr) -> bool:
    """`dataclasses.replace(cfg, is_dynamic_persistent=False)`, `cfg._replace(use_tma=False)`: a copy of
    a config with features turned off (unsloth's CLC scheduler, off on sm100 for a correctness bug)."""
    return (
        isinstance(value, ast.Call)
        and call_name(value.func).split(".")[-1] in {"replace", "_replace"}
        and bool(value.keywords)
        and all(
            k.arg is not None and isinstance(k.value, ast.Constant) and k.value.value in (None, False, 0)
            for k in value.keywords
        )
    )


def _says_why_not(stmt: ast.stmt) -> bool:
    """`reason = "the device is not SM100-family"` where `reason` is a reason variable of the
    function (reason_names): a refusal kept for the check after the chain, no path of its own."""
    return isinstance(stmt, ast.Assign) and _target_name(stmt) in _REASON_NAMES[-1] and _a_string(stmt.value)


def _target_name(stmt: ast.Assign) -> str:
    target = stmt.targets[0] if len(stmt.targets) == 1 else None
    return target.id if isinstance(target, ast.Name) else ""


def _validates(stmt: ast.stmt) -> bool:
    """An assert checks; a branch of nothing but asserts only restricts."""
    return isinstance(stmt, ast.Assert)


# a log line that names the defect its branch steps around ("using triton MOE kernel to avoid
# triton_kernels SIGSEGV"): the branch is a workaround, a downgrade for the GPUs that take it
_WORKAROUND = re.compile(
    r"\bto avoid\b|work-?around|segfault|sigsegv|\bcrash|\bhangs?\b|known (?:bug|issue)", re.I
)


def _logs_refusal(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if call_name(call.func).split(".")[-1] in _LOGS:
            words = [_message(a) for a in call.args[:1]]
            return any(_REFUSAL.search(w) or _WORKAROUND.search(w) for w in words)
    return False


def _denies(stmt: ast.stmt) -> bool:
    """`unsupported.append(...)`, `self.blocked.add(...)`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr in {"append", "add", "extend", "update"}:
            return bool(_DENY_LIST.search(ast.unparse(func.value)))
    return False


def _first_words(stmts: list[ast.stmt]) -> str:
    first = stmts[0]
    if isinstance(first, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        value = first.value
        if isinstance(value, ast.IfExp) and len(ast.unparse(first)) > 70:
            # `x = "a" if <a long test> else "b"`: the values it may set, not the test, are what it does
            picks = _choices(value)
            if picks is not None:
                targets = first.targets if isinstance(first, ast.Assign) else [first.target]
                named = short(" = ".join(ast.unparse(t) for t in targets), 40)
                return f"sets {named} = {' or '.join(picks)} (by a condition)"
        return f"sets {short(ast.unparse(first), 70)}"
    return short(ast.unparse(first), 70)


def _choices(node: ast.expr) -> list[str] | None:
    """The constants a chain of conditional expressions gives (`"a" if x else "b" if y else "c"`),
    each once; None when one is no constant."""
    out: list[str] = []
    while isinstance(node, ast.IfExp):
        if not isinstance(node.body, ast.Constant):
            return None
        out.append(repr(node.body.value))
        node = node.orelse
    if not isinstance(node, ast.Constant):
        return None
    out.append(repr(node.value))
    return list(dict.fromkeys(out))


def expression_summary(node: ast.expr) -> tuple[str, str]:
    """(action, summary) of one arm of a conditional expression."""
    if isinstance(node, ast.Constant) and (node.value is None or node.value is False):
        return "reject", f"gives {node.value!r}"
    return "positive", f"gives {short(ast.unparse(node), 60)}"
