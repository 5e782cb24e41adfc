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
from capgap.judging.symbolic import call_name

_INDEX: WeakKeyDictionary[Registry, dict[str, list[Decision]]] = WeakKeyDictionary()


def _called_in(test: ast.expr) -> set[str]:
    """The last names of the functions a test calls (`self.x.is_ok()` -> "is_ok")."""
    return {call_name(n.func).split(".")[-1] for n in ast.walk(test) if isinstance(n, ast.Call)} - {""}


def _index(reg: Registry) -> dict[str, list[Decision]]:
    found = _INDEX.get(reg)
    if found is None:
        found = {}
        for f in reg.files:
            for d in f.decisions:
                for arm in d.arms:
                    if arm.test is not None:
                        for name in _called_in(arm.test):
                            found.setdefault(name, []).append(d)
        _INDEX[reg] = found
    return found


def helper_name(d: Decision) -> str:
    """The function a `return` decision answers for (its context's last part)."""
    return d.context.rpartition(".")[2] if d.context else ""


def asked_elsewhere(d: Decision, f: FileFacts, reg: Registry) -> bool:
    """Is the predicate `d` answers for (a `return` decision) called in the test of another
    decision of the scan? Then that decision holds the path it guards."""
    name = helper_name(d)
    if d.kind != "return" or not name or name.startswith("<"):
        return False
    return any(other is not d for other in _index(reg).get(name, ()))
