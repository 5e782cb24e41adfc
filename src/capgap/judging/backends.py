"""What a backend says of itself: the capability check of the class an enum member picks.

Engines pick backends by enum member, often in priority lists (`priorities = [Backends.RAGGED,
Backends.FLASH]` on SM100), and each backend class answers for itself whether a GPU can run it
(`def supports_compute_capability(cls, cap): return cap.major == 10`). The member maps to its
class by the module or class the member's name names: `RAGGED` to `.../prefill/ragged.py` or to
`RaggedPrefillBackend`, the enum's own words (`MLAPrefillBackendEnum`: mla, prefill) telling apart
like-named backends of other kinds. When every backend the owners' path picks and the target's
does not is refused the target by its own check, leaving the target out is consistent (expected).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from capgap.judging.reach import reached
from capgap.judging.validations import Verdict

if TYPE_CHECKING:
    from capgap.judging.records import Decision, FileFacts
    from capgap.judging.registry import Registry

# `Enum.MEMBER`: a CamelCase class name, then an upper-case member name
_MEMBER = re.compile(r"\b([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\.([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\b")
# a class's own answer to whether a GPU can run it
_CHECK = re.compile(r"^(?:is_supported|supports_\w*(?:capability|arch|device)\w*)$")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_MAX_PICKS = 8


def picked(code: str) -> tuple[str, ...]:
    """The enum members the code names (`Backends.FAST_MHA`), in order, each once."""
    found = (f"{m[1]}.{m[2]}" for m in _MEMBER.finditer(code) if len(m[2]) > 1)
    return tuple(dict.fromkeys(found))[:_MAX_PICKS]


def _words(name: str) -> list[str]:
    """`MLAPrefillBackendEnum` -> mla, prefill, backend, enum; `flash_attn` -> flash, attn."""
    return [w.lower().removesuffix("s") for part in name.split("_") for w in _CAMEL.findall(part)]


def _names_class(key: str, cls: str, kind: set[str]) -> bool:
    """Does the member (`key`: `fastmha`) name the class (`FastMHAPrefillBackend`): the class's
    first words spell it and the rest are the enum's own words (`PrefillBackendEnum`)?"""
    raw = [w.lower() for part in cls.split("_") for w in _CAMEL.findall(part)]
    for k in range(1, len(raw) + 1):
        if "".join(raw[:k]) == key:
            return {w.removesuffix("s") for w in raw[k:]} <= kind | {"backend"}
    return False


class Backends:
    """The scan's class capability checks (`Cls.supports_compute_capability`), found on first use."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._checks: list[tuple[FileFacts, Decision, str]] | None = None

    def _index(self) -> list[tuple[FileFacts, Decision, str]]:
        if self._checks is None:
            self._checks = []
            for f in self._reg.files:
                for d in f.decisions:
                    parts = d.context.split(".")
                    if len(parts) >= 2 and _CHECK.match(parts[-1]):
                        self._checks.append((f, d, parts[-2]))
        return self._checks

    def _candidates(self, pick: str) -> list[tuple[FileFacts, Decision]]:
        """The checks of the class the member maps to: its module or its class is named by the member
        (the class's name may add words of the enum's own); the ones sharing most of the enum's words."""
        enum, _, member = pick.partition(".")
        key = member.replace("_", "").lower()
        kind = set(_words(enum)) - {"enum"}
        scored: list[tuple[tuple[bool, int, int], FileFacts, Decision]] = []
        for f, d, cls in self._index():
            module = f.module.rsplit(".", 1)[-1].replace("_", "").lower()
            named = _names_class(key, cls, kind)
            if module != key and not named:
                continue
            # a class the member names first, then the enum's words its name shares (`FastPrefillBackend`
            # over `FastBackend` for a `PrefillBackendEnum`), then those its module's path does
            path = {w for part in f.module.split(".") for w in _words(part)}
            scored.append(((named, len(kind & set(_words(cls))), len(kind & path)), f, d))
        best = max((s for s, _, _ in scored), default=(False, 0, 0))
        return [(f, d) for s, f, d in scored if s == best]

    def verdict(self, pick: str, target: str, owners: list[str]) -> Verdict | None:
        """A refusal, when every check of the class `pick` maps to turns the target away (each arm it
        reaches returns False or raises) and lets one of the owners through; else None."""
        found = self._candidates(pick)
        refusals: list[Verdict] = []
        for f, d in found:
            r = reached(d, self._reg.context(d.scope, f))
            mine = r.reach.get(target) if r is not None else None
            if r is None or not mine or any(d.arms[i].action not in {"reject", "error"} for i in mine):
                return None
            if not any(d.arms[i].action == "positive" for cc in owners for i in r.reach.get(cc, ())):
                return None
            refusals.append(Verdict(True, f"{f.path}:{d.line}", d.arms[mine[0]].summary, "backend"))
        return refusals[0] if refusals else None
