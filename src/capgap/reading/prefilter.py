"""Byte-level pre-filter: which files (and which of their statements) can matter at all.

Most of an engine's files never mention a capability; reading their bytes is all they cost.
Plain substring tests (`bytes.__contains__`, a fast C search) decide; regular expressions run
only to confirm a hit, and only where they start with a literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from capgap.reading.tokens import CAP_TOKENS, CC_KEY_TOKENS

_SM = re.compile(rb"sm_?\d\d")
# Starts with the literal `sm` so the regex engine can jump between candidates (a leading class
# such as `["']` makes it try every byte); the opening quote is checked by hand.
_SM_KEY_TAIL = re.compile(rb"sm_?\d{2,3}[af]?[\"']\s*:")
_BEFORE_KEY = b" \t{,\n"


def mentions_capability(low: bytes) -> bool:
    """`low`: the file's bytes, lowercased."""
    return any(tok in low for tok in CAP_TOKENS) or (b"sm" in low and _SM.search(low) is not None)


def _is_key(low: bytes, i: int, tok: bytes) -> bool:
    if tok[0:1] in b"91":  # `9: ` / `10: ` must start a key: after a space, `{`, `,` or a newline
        return i == 0 or low[i - 1] in _BEFORE_KEY
    return True


# Each key token is searched by a part that ends in a rarer byte than a space: the byte search
# skips ahead by the needle's last byte, and code is full of spaces. (anchor, its offset in token)
_ANCHORS = {
    b"9: ": (b"9:", 0),
    b"10: ": (b"10:", 0),
    b'.0": ': (b'0":', 1),
    b".0': ": (b"0':", 1),
    b", 0): ": (b"0):", 2),
    b"90: ": (b"90:", 0),
    b"100: ": (b"100:", 0),
}


def _occurrences(low: bytes, tok: bytes) -> Iterator[int]:
    """Every offset of `tok` in `low` (overlapping ones too), found through its anchor."""
    anchor, k = _ANCHORS.get(tok, (tok, 0))
    j = low.find(anchor)
    while j != -1:
        i = j - k
        if i >= 0 and (k == 0 and anchor == tok or low.startswith(tok, i)):
            yield i
        j = low.find(anchor, j + 1)


def has_cc_key(low: bytes) -> bool:
    """Is there a dict entry keyed like a compute capability?"""
    for tok in CC_KEY_TOKENS:
        for tries, i in enumerate(_occurrences(low, tok)):
            if tries >= 64:
                break
            if _is_key(low, i, tok):
                return True
    return b"sm_" in low and any(True for _ in _sm_keys(low))


def _sm_keys(low: bytes) -> Iterator[int]:
    """Offsets of `"sm_90": `-style keys (the opening quote included)."""
    for m in _SM_KEY_TAIL.finditer(low):
        i = m.start()
        if i > 0 and low[i - 1] in b"\"'":
            yield i - 1


def worth_parsing(data: bytes) -> bool:
    low = data.lower()
    return mentions_capability(low) or has_cc_key(low)


# Names a gate or a table read may test (the extractor's capability names: `major`, `arch`,
# `gpu_arch`, `cc`, `sm`, `sm_count`, ...): statements holding one are kept in the cut, so a
# `major == 9` deep in a function is read whatever surrounds it. Each regex starts with its
# literal (fast to search); the name's start is checked by hand.
_ALWAYS_NAMES = (re.compile(rb"ampere"), re.compile(rb"capab"))  # always about a capability
_NARROWED_NAMES = (
    re.compile(rb"major"),
    re.compile(rb"arch(?<![a-z0-9]arch)(?:_|(?![a-z0-9.]))"),  # not `cute.arch.sync()`: a module
    re.compile(rb"cc(?<![a-z0-9]cc)(?:_|(?![a-z0-9.]))"),
    re.compile(rb"sm(?<![a-z0-9]sm)(?![a-z0-9_.])"),  # `sm`, `num_sm`; `sm90`, `sm_90` are tokens
)
# `major`, `arch`, `cc` and `sm` also name things no gate tests: a model's "architecture"
# (`arch: ModelArchConfig,`, `hidden = arch.ffn_hidden_size`). Such a name counts only where it
# can feed a test: on a line that compares, indexes or looks up (`arch >= 90`, `sm_count[i]`,
# `.get(`, ` in `), where a call starts at it (`get_arch(`, `is_arch_support_pdl (`), or in the
# value of an assignment after a call opens (`x = f(device_arch)`). Measured on sglang: 7% less
# text parsed, the same findings. (_cutscan.c replays these exactly.)
_COMPARES = re.compile(rb"[<>\[]|==|!=| in |\.get\(")
_CALL = re.compile(rb"\w*\s*\(")
_ASSIGNED_CALL = re.compile(rb"[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*(?::[^=\n]*)?=[^=\n][^\n(]*\(")


def name_hit_counts(low: bytes, i: int) -> bool:
    """Does the name at `i` of the lowercased `low` sit where a gate could test it?"""
    start = low.rfind(b"\n", 0, i) + 1
    end = low.find(b"\n", i)
    if _COMPARES.search(low, start, end if end != -1 else len(low)):
        return True
    if _CALL.match(low, i):
        return True
    m = _ASSIGNED_CALL.match(low, start)
    return m is not None and m.end() <= i


# Every token as a literal pattern: C-level scanning, no Python step per occurrence.
_TOKEN_PATTERNS = tuple((tok, re.compile(re.escape(tok))) for tok in CAP_TOKENS + CC_KEY_TOKENS)


def hit_offsets(data: bytes, names: bool = False) -> list[int]:
    """Sorted byte offsets of every capability token and capability-like dict key in `data`
    (and, with `names`, of every capability-like name where a test could read it)."""
    low = data.lower()
    offsets: list[int] = []
    if names:
        for pattern in _ALWAYS_NAMES:
            offsets.extend([m.start() for m in pattern.finditer(low)])
        for pattern in _NARROWED_NAMES:
            offsets.extend([i for m in pattern.finditer(low) if name_hit_counts(low, i := m.start())])
    for tok, pattern in _TOKEN_PATTERNS:
        if tok[0:1] in b"91":  # `9: ` / `10: ` must start a key
            offsets.extend([i for m in pattern.finditer(low) if _is_key(low, i := m.start(), tok)])
        else:
            offsets.extend([m.start() for m in pattern.finditer(low)])
    offsets.extend(m.start() for m in _SM.finditer(low))
    if b"sm" in low:  # `"sm90": ` as well as `"sm_90": `
        offsets.extend(_sm_keys(low))
    offsets.sort()
    return offsets
