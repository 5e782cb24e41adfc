"""A module that turns the target away where it reads the GPU.

cuDNN frontend's flex attention reads the GPU in one place, `get_device_arch()`, which returns
`major * 10 + minor` and raises NotImplementedError for any arch outside (90, 100, 103). Every
dispatch of the package (`arch == 90`, `dispatch.arch in (100, 103)`, an `arch: int` handed down)
tests the number it returned. A decision that tests an arch handed to it, not the GPU itself, in a
module that defines such a getter or imports or calls one of its package's, is never reached on a
target the getter refuses: what it withholds is no loss of the target's (issue 14, point 2); the
getter's refusal is where the target is turned away.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from typing import TYPE_CHECKING

from capgap.arch import ArchFacts
from capgap.judging.outcomes import message_of
from capgap.judging.records import Decision, FileFacts, HelperDef
from capgap.judging.statements import short
from capgap.judging.symbolic import call_name

if TYPE_CHECKING:
    from capgap.judging.registry import Registry

# A test that asks the GPU itself, not an arch number it was handed
_ASKS_DEVICE = re.compile(
    r"get_device_capability|get_compute_capability|device_capability|get_device_properties|"
    r"current_platform|get_platform|\bis_sm\d|\bis_(?:hopper|blackwell)|torch\.cuda",
    re.I,
)
_GETTER_WORDS = ("raise", "capabilit")  # a getter that refuses holds both


class Getters:
    """The argument-less getters that return the GPU's capability and raise for some archs, and
    for each module those it asks: its own, and those of its package it imports or calls."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._by_module: dict[str, list[HelperDef]] = defaultdict(list)
        self._files: dict[str, FileFacts] = {}
        for f in reg.files:
            self._files[f.module] = f
            for h in f.helpers:
                if h.kind == "def" and not h.method and all(w in "".join(h.source) for w in _GETTER_WORDS):
                    self._by_module[f.module].append(h)
        self._found: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def refusal(self, f: FileFacts, target: ArchFacts, context: str) -> str:
        """How a getter the module asks refuses the target ("" when none does);
        `context`: the function the decision sits in (a getter's own test is the refusal itself,
        judged as any decision)."""
        key = (f.module, target.cc)
        if key not in self._found:
            self._found[key] = self._search(f, target)
        return next((said for name, said in self._found[key] if name != context), "")

    def _search(self, f: FileFacts, target: ArchFacts) -> list[tuple[str, str]]:
        """(the getter's name where it is the module's own, else "", and how it refuses) for each
        getter the module asks."""
        package = f.module.rpartition(".")[0]
        own_code = "\n".join("".join(h.source) for h in f.helpers if h.kind == "def")
        asked = [
            (module, h)
            for module, helpers in self._by_module.items()
            if module == f.module or (package and module.startswith(f"{package}."))
            for h in helpers
            if module == f.module or f.imports.get(h.name) == module or f"{h.name}(" in own_code
        ]
        out = []
        for module, h in asked:
            ctx = self._reg.context(h.scope, self._files[module])
            if h.evaluate([], {}, ctx).kind != "cap":
                continue  # (not the GPU's number it hands back)
            raised = h.refusal(ctx, target)
            if raised is None:
                continue
            exc = raised.exc
            name = call_name(exc.func) if isinstance(exc, ast.Call) else ""
            words = message_of(exc.args[0]) if isinstance(exc, ast.Call) and exc.args else ""
            said = f" '{short(words, 100)}'" if words else ""
            own = h.name if module == f.module else ""
            out.append((own, f"{module}.{h.name}() raises {name or 'an exception'}{said} on {target.cc}"))
        return out


def refused_before(d: Decision, f: FileFacts, reg: Registry, target: ArchFacts) -> str:
    """How a getter the decision's module asks (its own, or one of its package's it imports or
    calls) refuses the target, when the decision tests an arch it was handed ("" otherwise)."""
    tests = [ast.unparse(a.test) for a in d.arms if a.test is not None]
    if not tests or any(_ASKS_DEVICE.search(t) for t in tests):
        return ""
    return reg.getters.refusal(f, target, d.context.partition(".")[0])
