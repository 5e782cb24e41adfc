"""Kernel registries: the kernels an engine registers per op with the CUDA archs each runs on.

SGLang's `sglang.kernels` inventory registers each op's implementations with a window of archs,

    KernelSpec(op="gemm.dual_gemm_swiglu", backend=KernelBackend.CUTE_DSL,
               target="sglang.kernels.ops.gemm.cutedsl_dual_gemm:dual_gemm_swiglu",
               capabilities=frozenset({CapabilityRequirement.cuda(min_sm=(10, 0), max_sm=(10, 9))}))

and dispatch keeps the implementations whose window admits the device. Read here by shape, not by
those names: a call with a keyword whose value holds calls bounded by `min_sm` / `max_sm` (through a
module constant, a set, or a generator over literal archs) registers one kernel; the call's string
keywords say its op and the callable it loads. A device-only requirement (`.CUDA`, `CUDA_ONLY`)
admits every CUDA arch; other devices (`.HIP`) none.
"""

from __future__ import annotations

import ast
import warnings

from capgap.judging.records import KernelSpecEntry
from capgap.judging.symbolic import call_name

_BOUNDS = ("min_sm", "max_sm")
_OP_KEYS = ("op", "name")
_TARGET_KEYS = ("target", "impl", "fn")
_DESCRIPTION_KEYS = ("description", "doc", "summary")
_MAX_WINDOWS = 32
Arch = tuple[int, int]
Window = tuple["Arch | None", "Arch | None"]


def may_register(text: str) -> bool:
    return "min_sm" in text or "max_sm" in text


def read(text: str) -> list[KernelSpecEntry]:
    """Each kernel the module registers, once it registers one with an arch window: the others
    it registers the same way (`capabilities=CUDA_ONLY`, or none: any device) are what the
    target may get instead ([] when it names no window, or when the text does not parse)."""
    if not may_register(text):
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    constants = {
        st.targets[0].id: st.value
        for st in tree.body
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
    }
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _op(n) is not None]
    # the registering call and the keyword that carries the windows, as the bounded ones spell them
    shapes = {
        (_last_name(c.func), k.arg)
        for c in calls
        for k in c.keywords
        if _bounded(_resolved(k.value, constants))
    }
    lines = text.splitlines()
    out: list[KernelSpecEntry] = []
    for call in calls:
        keys = [key for func, key in shapes if func == _last_name(call.func)]
        if keys and (entry := _entry(call, keys[0], constants, lines)) is not None:
            out.append(entry)
    return sorted(out, key=lambda e: e.line)


def _string(call: ast.Call, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` the call passes a string literal for."""
    strings = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
    return next((strings[k] for k in keys if isinstance(strings.get(k), str)), None)


def _op(call: ast.Call) -> str | None:
    return _string(call, _OP_KEYS)


def _entry(
    call: ast.Call, key: str | None, constants: dict[str, ast.expr], lines: list[str]
) -> KernelSpecEntry | None:
    op = _op(call)
    assert op is not None
    given = next((k.value for k in call.keywords if k.arg == key), None)
    windows = _windows(given, constants) if given is not None else [(None, None)]  # none: any device
    if windows is None:
        return None  # a window it cannot read: say nothing rather than guess
    backend = next((_last_name(k.value) for k in call.keywords if k.arg == "backend"), "")
    target = _string(call, _TARGET_KEYS) or ""
    line = given.lineno if given is not None else call.lineno
    return KernelSpecEntry(
        op=op,
        backend=backend,
        target=target.replace(":", "."),
        line=line,
        windows=tuple(windows),
        source=lines[line - 1].strip() if 0 < line <= len(lines) else "",
        description=_string(call, _DESCRIPTION_KEYS) or "",
    )


def _resolved(node: ast.expr, constants: dict[str, ast.expr]) -> ast.expr:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return node


def _bounded(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and any(k.arg in _BOUNDS for k in n.keywords) for n in ast.walk(node))


def _windows(node: ast.expr, constants: dict[str, ast.expr]) -> list[Window] | None:
    """The CUDA windows a requirement expression admits; None when it cannot be read."""
    node = _resolved(node, constants)
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        out: list[Window] = []
        for item in node.elts:
            part = _windows(item, constants)
            if part is None:
                return None
            out += part
        return out[:_MAX_WINDOWS]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1:  # frozenset({...})
        arg = node.args[0]
        if isinstance(arg, ast.GeneratorExp):
            return _generated(arg, constants)
        return _windows(arg, constants)
    if isinstance(node, ast.Call) and any(k.arg in _BOUNDS for k in node.keywords):
        bounds = {k.arg: _arch(k.value) for k in node.keywords if k.arg in _BOUNDS}
        if any(b is False for b in bounds.values()):
            return None
        return [(bounds.get("min_sm") or None, bounds.get("max_sm") or None)]  # type: ignore[list-item]
    if isinstance(node, ast.Attribute):  # `CapabilityRequirement.CUDA`: any CUDA arch; `.HIP`: none
        return [(None, None)] if node.attr.upper() == "CUDA" else []
    if isinstance(node, ast.Name) and "CUDA" in node.id.upper():  # `CUDA_ONLY`, defined elsewhere
        return [(None, None)]
    return None


def _generated(gen: ast.GeneratorExp, constants: dict[str, ast.expr]) -> list[Window] | None:
    """`frozenset(R.cuda(min_sm=sm, max_sm=sm) for sm in ((10, 0), (10, 3)))`."""
    if len(gen.generators) != 1 or gen.generators[0].ifs:
        return None
    loop = gen.generators[0]
    values = _resolved(loop.iter, constants)
    if not (isinstance(loop.target, ast.Name) and isinstance(values, (ast.Tuple, ast.List, ast.Set))):
        return None
    out: list[Window] = []
    for value in values.elts:
        bound = _Substitute(loop.target.id, value).visit(_copy(gen.elt))
        part = _windows(bound, constants)
        if part is None:
            return None
        out += part
    return out[:_MAX_WINDOWS]


class _Substitute(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr) -> None:
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.value if node.id == self.name else node


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body


def _arch(node: ast.expr) -> Arch | None | bool:
    """`(10, 0)` -> (10, 0); `100` / `"10.0"` -> (10, 0); `None` -> None; False when unreadable."""
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        parts = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        return (parts[0], parts[1]) if len(parts) == 2 else False
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and 10 <= node.value < 1000:
        return divmod(node.value, 10)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        major, _, minor = node.value.partition(".")
        if major.isdigit() and minor.isdigit():
            return int(major), int(minor)
    return False


def _last_name(node: ast.expr) -> str:
    """`KernelBackend.JIT` -> "JIT", `KernelSpec` -> "KernelSpec", `"jit"` -> "jit"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return call_name(node)


def admits(entry: KernelSpecEntry, major: int, minor: int) -> bool:
    return any(
        (lo is None or (major, minor) >= lo) and (hi is None or (major, minor) <= hi)
        for lo, hi in entry.windows
    )
