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
    if name not in text:  # (most files: one substring search instead of two regexes)
        return False
    escaped = re.escape(name)
    if re.search(rf"\.{escaped}\b(?!\s*=(?!=))", text):
        return True
    return re.search(rf"""(?:getattr|hasattr)\([^()]*["']{escaped}["']""", text) is not None


def demote(findings: list[Finding], read: Reader) -> list[Finding]:
    """The findings, those whose path only sets an attribute nothing reads demoted to low."""

    def flag(finding: Finding) -> str | None:
        hit = _SETS.match(_taken(finding))
        return hit[1] if hit is not None else None

    def lower(finding: Finding, name: str) -> Finding:
        said = f"nothing in the tree reads self.{name}: the flag this path sets guards nothing"
        return lowered(finding, said, "unread", f"self.{name}")

    return demote_where_none_names(findings, read, flag, _reads, lower)


def demote_where_none_names(
    findings: list[Finding],
    read: Reader,
    word_of: Callable[[Finding], str | None],
    names: Callable[[str, str], bool],
    lower: Callable[[Finding, str], Finding],
    rules: tuple[str, ...] = ("gate-excludes-arch",),
) -> list[Finding]:
    """The findings, each medium or high finding of `rules` whose word (`word_of`, None for none)
    no file `read` gives `names(text, word)` lowered by `lower(finding, word)`; files are read
    until every word is named."""
    at: dict[str, list[int]] = {}
    for i, finding in enumerate(findings):
        if finding.rule in rules and finding.severity in _SEVERE:
            word = word_of(finding)
            if word is not None:
                at.setdefault(word, []).append(i)
    if not at:
        return findings
    left = set(at)
    for _rel, text in read(at):
        left -= {word for word in left if names(text, word)}
        if not left:
            return findings
    out = list(findings)
    for word in left:
        for i in at[word]:
            out[i] = lower(out[i], word)
    return out
