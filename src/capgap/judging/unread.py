"""Flags a gate sets on an object that nothing in the tree reads: the gate guards nothing.

exllamav3's vendored fla `DeviceKind.__init__` sets `self.hopper = IS_NVIDIA and p.major == 9`
beside `self.blackwell`; its kernels consult `dev.blackwell` and never `dev.hopper`. That 12.0
"leaves self.hopper False" costs it nothing. A medium or high gate finding whose path only sets
one attribute that no Python file of the tree reads (`.hopper` other than assigned to, or
`getattr(x, "hopper")`) is low, with `extra.unread` naming it. Only attributes: a local flag is
read in its own function, a module's name may be read from outside the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from capgap.findings import Finding, lowered

_SEVERE = ("medium", "high")
_SETS = re.compile(r"^sets self\.(\w+) = [^,;]+$")  # the siblings' whole path: one attribute set

Reader = Callable[[Iterable[str]], Iterator[tuple[str, str]]]


def _taken(finding: Finding) -> str:
    """The siblings' outcome as the message words it (between their archs and the target's)."""
    head = f"{finding.symbol} leaves {finding.arch} out: {', '.join(finding.present)} "
    tail = f", {finding.arch} {finding.extra.get('instead', '')}"
    message = finding.message
    if not message.startswith(head) or not message.endswith(tail):
        return ""
    return message[len(head) : len(message) - len(tail)]


def _reads(text: str, name: str) -> bool:
    """Does the text read attribute `name` (not only assign it)?"""
    escaped = re.escape(name)
    if re.search(rf"\.{escaped}\b(?!\s*=(?!=))", text):
        return True
    return re.search(rf"""(?:getattr|hasattr)\([^()]*["']{escaped}["']""", text) is not None


def demote(findings: list[Finding], read: Reader) -> list[Finding]:
    """The findings, those whose path only sets an attribute nothing reads demoted to low."""
    flags: dict[str, list[int]] = {}
    for i, finding in enumerate(findings):
        if finding.rule != "gate-excludes-arch" or finding.severity not in _SEVERE:
            continue
        hit = _SETS.match(_taken(finding))
        if hit is not None:
            flags.setdefault(hit[1], []).append(i)
    if not flags:
        return findings
    unread = set(flags)
    for _rel, text in read(flags):
        unread -= {name for name in unread if _reads(text, name)}
        if not unread:
            return findings
    out = list(findings)
    for name in unread:
        for i in flags[name]:
            said = f"nothing in the tree reads self.{name}: the flag this path sets guards nothing"
            out[i] = lowered(out[i], said, "unread", f"self.{name}")
    return out
