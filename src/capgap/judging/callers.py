"""Where a capability predicate is asked: the decisions of the scan whose tests call it.

A helper such as `def _fused_kernel_supported(): return is_cuda and major == 10` is a decision
of its own (its returns), but what the answer guards sits at its callers: `if
_fused_kernel_supported(): run_tcgen05_kernel()` holds the path, its evidence and its cost. When
such a caller is a decision the scan judges, the helper's definition adds nothing but a second,
evidence-blind finding; only a predicate no judged decision asks is judged where it is defined.
"""

from __future__ import annotations

import ast
from weakref import WeakKeyDictionary

from capgap.judging.records import Decision, FileFacts
from capgap.judging.registry import Registry
from capgap.judging.statements import walk
from capgap.judging.symbolic import call_name

_INDEX: WeakKeyDictionary[Registry, dict[str, list[tuple[FileFacts, Decision, bool]]]] = WeakKeyDictionary()


def _called_in(test: ast.expr) -> dict[str, bool]:
    """The last names of the functions a test calls, each with whether it is called as an
    attribute (`self.x.is_ok()` -> "is_ok": True; `is_ok()` -> False)."""
    out: dict[str, bool] = {}
    for node in walk(test):
        if isinstance(node, ast.Call) and (name := call_name(node.func).split(".")[-1]):
            out[name] = out.get(name, False) or isinstance(node.func, ast.Attribute)
    return out


def _index(reg: Registry) -> dict[str, list[tuple[FileFacts, Decision, bool]]]:
    found = _INDEX.get(reg)
    if found is None:
        found = {}
        for f in reg.files:
            for d in f.decisions:
                for arm in d.arms:
                    if arm.test is not None:
                        for name, attr in _called_in(arm.test).items():
                            found.setdefault(name, []).append((f, d, attr))
        _INDEX[reg] = found
    return found


def _means(caller: FileFacts, name: str, attr: bool, module: str) -> bool:
    """Can `name` called in `caller` be the helper of `module`? Not when the caller imports that
    name from another module, or defines a function of that name itself; a method called on an
    object (`self.supported()`) or a name whose import the cut did not keep may be."""
    if attr or caller.module == module:
        return True
    source = caller.imports.get(name)
    if source is not None:
        return source in (module, f"{module}.{name}")
    return not any(h.name == name and h.kind == "def" for h in caller.helpers)


def helper_name(d: Decision) -> str:
    """The function a `return` decision answers for (its context's last part)."""
    return d.context.rpartition(".")[2] if d.context else ""


def asked_elsewhere(d: Decision, f: FileFacts, reg: Registry) -> bool:
    """Is the predicate `d` answers for (a `return` decision) called in the test of another
    decision of the scan? Then that decision holds the path it guards."""
    name = helper_name(d)
    if d.kind not in ("return", "chain", "guards") or not name or name.startswith("<"):
        return False
    asked = _index(reg).get(name, ())
    return any(other is not d and _means(caller, name, attr, f.module) for caller, other, attr in asked)
