"""Read a native source's preprocessor structure: directives, conditional groups, defines.

Only the directive lines are parsed (found by one multiline regex, C speed); a line continued
with a backslash is joined, comments are cut, and a directive inside a block comment is none.
Bodies are looked at only for groups whose conditions name an arch macro (`bodies`).
"""

from __future__ import annotations

import bisect
import re

from capgap.native import bodies
from capgap.native.records import Arm, Define, Group, NativeFacts

NATIVE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".inl", ".cxx", ".hxx")
# A file must hold one of these bytes to be read at all.
PREFILTER = (b"__CUDA_ARCH", b"CUTLASS_ARCH_MMA_", b"CUDA_ARCH_FAMILY", b"CUDA_ARCH_CONDITIONAL")
MAX_BYTES = 16 << 20
# Led by the literal `#` (the regex engine then skips between them at C speed); that only blanks
# precede it on its line is checked by hand.
_DIRECTIVE = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif|define|error)\b")
_BLOCK = re.compile(rb"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//.*$|/\*.*?\*/", re.S)
# A condition that names an arch: judged. (Other groups only decide whether what is inside is reached.)
ARCHISH = re.compile(r"__CUDA_ARCH|CUDA_ARCH_|_SM_?\d{2,3}|\bSM_?\d{2,3}")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)", re.S)


def wanted(data: bytes) -> bool:
    return any(tok in data for tok in PREFILTER)


def read(rel: str, data: bytes, judged: bool = True) -> NativeFacts | None:
    """The file's facts, or None when the prefilter finds no arch macro in it. `judged`: its
    bodies are looked at too (a vendored library's are not, unless --all asks to judge them)."""
    if not wanted(data):
        return None
    facts = NativeFacts(rel)
    comments = _comment_spans(data)
    stack: list[int] = []
    groups = facts.groups
    line, last = 1, 0
    errors: list[tuple[int, int]] = []  # (group, arm) holding an #error
    for m in _DIRECTIVE.finditer(data):
        start = m.start()
        bol = data.rfind(b"\n", 0, start) + 1
        if bol != start and data[bol:start].strip(b" \t"):
            continue  # not the first thing on its line: no directive
        if comments and _inside(comments, start):
            continue
        line += data.count(b"\n", last, start)
        last = start
        text, span_end = _directive_text(data, m.end())
        kind = m[1].decode()
        if kind in ("if", "ifdef", "ifndef"):
            parent = (stack[-1], len(groups[stack[-1]].arms) - 1) if stack else None
            groups.append(
                Group([Arm(line, _cond(kind, text), start, span_end, source=_first(data, start))], parent)
            )
            stack.append(len(groups) - 1)
        elif kind in ("elif", "elifdef", "elifndef", "else") and stack:
            g = groups[stack[-1]]
            cond = (
                "1" if kind == "else" else _cond(kind.replace("el", "", 1) if kind != "elif" else "if", text)
            )
            g.arms.append(Arm(line, cond, start, span_end, source=_first(data, start)))
        elif kind == "endif" and stack:
            g = groups[stack.pop()]
            g.end, g.end_offset = line, start
        elif kind == "define":
            d = _define(text, start, (stack[-1], len(groups[stack[-1]].arms) - 1) if stack else None)
            if d is not None:
                facts.defines.append(d)
        elif kind == "error" and stack:
            errors.append((stack[-1], len(groups[stack[-1]].arms) - 1))
    total = line + data.count(b"\n", last)
    for gi in stack:  # unclosed at the end of the file
        groups[gi].end, groups[gi].end_offset = total, len(data)
    for g in groups:
        g.archish = any(ARCHISH.search(a.cond) for a in g.arms)
    if judged and any(g.archish for g in groups):
        bodies.describe(data, groups, set(errors))
    return facts


def _comment_spans(data: bytes) -> list[tuple[int, int]]:
    if b"/*" not in data:
        return []
    return [(m.start(), m.end()) for m in _BLOCK.finditer(data)]


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    i = bisect.bisect_right(spans, (pos, 1 << 62)) - 1
    return i >= 0 and spans[i][0] < pos < spans[i][1]


def _directive_text(data: bytes, start: int) -> tuple[str, int]:
    """The directive's text after its keyword (continuation lines joined, comments cut), and
    where its last line ends."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    while True:
        j = end - 1 if data[end - 1 : end] == b"\r" else end
        if j <= start or data[j - 1 : j] != b"\\" or end >= len(data):
            break
        nxt = data.find(b"\n", end + 1)
        end = len(data) if nxt < 0 else nxt
    raw = data[start:end].decode("utf-8", "replace")
    if "/*" in raw and "*/" not in raw[raw.index("/*") :]:
        close = data.find(b"*/", end)
        if close >= 0:
            raw = raw + data[end : close + 2].decode("utf-8", "replace")
    raw = raw.replace("\\\r\n", " ").replace("\\\n", " ")
    return _LINE_COMMENT.sub(" ", raw).strip(), end


def _cond(kind: str, text: str) -> str:
    if kind == "ifdef":
        return f"defined({text.split()[0]})" if text.split() else "0"
    if kind == "ifndef":
        return f"!defined({text.split()[0]})" if text.split() else "0"
    return text or "0"


def _first(data: bytes, start: int) -> str:
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)].decode("utf-8", "replace").strip()[:200]


def _define(text: str, offset: int, parent: tuple[int, int] | None) -> Define | None:
    m = _DEFINE.match(text)
    if m is None:
        return None
    params = None
    if m[2] is not None and text[len(m[1]) : len(m[1]) + 1] == "(":  # `X(a)` is function-like, `X (a)` is not
        params = tuple(p.strip() for p in m[2][1:-1].split(",") if p.strip())
        value = m[3]
    else:
        value = ((m[2] or "") + " " + m[3]).strip()
    return Define(m[1], params, value.strip(), offset, parent)
