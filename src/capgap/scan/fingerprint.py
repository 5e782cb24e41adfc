"""Stable fingerprints: one id per finding that survives line moves and reformatting.

Made of what the finding is about, never of where it sits: the rule, the target's package name
(not its version, not its root: two releases' findings compare), the path within the target, the
symbol, the enclosing function, the arch, and the deciding text normalised (whitespace, comments
and quote style do not count). Two findings that would still share one get `:2`, `:3`, ... in
file order, so every finding of one scan has its own.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

from capgap.findings import Finding

_CANON = re.compile(r"[-_.]+")
_WORD = re.compile(r"\w")
# what the source text of a binary or config finding says (SASS lists, shape counts) changes with
# every release without the finding changing: their symbol (the library, the directory) is enough
_SUMMARY_SOURCE = frozenset({"binary-missing-arch", "config-missing-device"})


def canonical_name(name: str | None) -> str:
    return _CANON.sub("-", name or "").lower()


def package_name(name: str | None, root: str) -> str:
    """The target's package: its dist name, else a `*.dist-info` beside the files (an unpacked
    wheel), else `[project] name` of the root's pyproject.toml; "" for a plain tree."""
    if name:
        return canonical_name(name)
    try:
        with os.scandir(root) as entries:
            infos = sorted(e.name for e in entries if e.name.endswith(".dist-info"))
    except OSError:
        infos = []
    if infos:
        return canonical_name(infos[0][: -len(".dist-info")].split("-")[0])
    return canonical_name(_project_name(os.path.join(root, "pyproject.toml")))


def _project_name(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError:
        return ""
    from capgap.settings import parse_toml

    try:
        project = parse_toml(data).get("project")
    except ValueError:  # not ours to judge: no name from it
        return ""
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) else ""


_TOKEN = re.compile(
    r"""(?P<s>'''(?:\\.|[^\\])*?(?:'''|$)|\"\"\"(?:\\.|[^\\])*?(?:\"\"\"|$)"""
    r"""|'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?)"""
    r"""|(?P<c>\#[^\n]*)|(?P<w>[\s\\]+)|(?P<o>[^'"\#\s\\]+)""",
    re.S,
)
_TRAILING_COMMA = re.compile(r",(?=[)\]}]|$)")


def normalize(text: str) -> str:
    """`text` with comments dropped, every string in one quote style and whitespace only where
    two words meet; a trailing comma before a closing bracket (a formatter's) dropped too."""
    out: list[str] = []
    space = False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "w" or kind == "c":
            space = True
            continue
        piece = m.group()
        if kind == "s":
            q = 3 if piece[:3] in ("'''", '"""') else 1
            body = piece[q:]
            if body.endswith(piece[:q]):
                body = body[: len(body) - q]
            piece = "'" + body + "'"
        elif space and out and _WORD.match(out[-1][-1]) and _WORD.match(piece[0]):
            out.append(" ")
        space = False
        out.append(piece)
    return _TRAILING_COMMA.sub("", "".join(out))


def deciding_text(finding: Finding) -> str:
    if finding.rule in _SUMMARY_SOURCE:
        return ""
    # a basis is unparsed syntax (judging/basis.py): one spelling already, whatever the layout
    return finding.basis or normalize(finding.source)


def base_fingerprint(finding: Finding, package: str) -> str:
    context = finding.extra.get("context", "") if finding.extra else ""
    parts = (finding.rule, package, finding.path, finding.symbol, str(context), finding.arch)
    key = "\0".join((*parts, deciding_text(finding)))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def fingerprints(findings: Sequence[Finding], packages: Sequence[str]) -> list[str]:
    """One fingerprint per finding (`packages`: each finding's target package), unique in the scan:
    a collision's later ones, in file order, get `:2`, `:3`, ..."""
    bases = [base_fingerprint(f, p) for f, p in zip(findings, packages, strict=True)]
    order = sorted(range(len(findings)), key=lambda i: (findings[i].path, findings[i].line, i))
    seen: dict[str, int] = {}
    out = list(bases)
    for i in order:
        count = seen.get(bases[i], 0) + 1
        seen[bases[i]] = count
        if count > 1:
            out[i] = f"{bases[i]}:{count}"
    return out
