"""Byte-level pre-filter: which files (and which of their statements) can matter at all.

Most of an engine's files never mention a capability; reading their bytes is all they cost.
Plain substring tests (`bytes.__contains__`, a fast C search) decide; regular expressions run
only to confirm a hit, and only where they start with a literal.
"""

from __future__ import annotations

import re

# Any one of these makes a file (or statement) worth parsing for gates and table reads.
CAP_TOKENS = (
    b"capabilit",
    b"Capabilit",
    b"CAPABILIT",
    b"blackwell",
    b"Blackwell",
    b"BLACKWELL",
    b"hopper",
    b"Hopper",
    b"device_sm",
    b"arch_list",
    b"ARCH_LIST",
    b"cuda_arch",
    b"CUDA_ARCH",
    b"sm_version",
    b"gencode",
)
_SM_CONFIRM = (re.compile(rb"sm_?\d\d"), re.compile(rb"SM_?\d\d"))
_KNOWN_NUMBERS = {
    b"70",
    b"72",
    b"75",
    b"80",
    b"86",
    b"87",
    b"88",
    b"89",
    b"90",
    b"100",
    b"103",
    b"110",
    b"120",
    b"121",
}
_BEFORE_KEY = b" \t{,\n"


def mentions_capability(data: bytes) -> bool:
    if any(tok in data for tok in CAP_TOKENS):
        return True
    return (b"sm" in data and _SM_CONFIRM[0].search(data) is not None) or (
        b"SM" in data and _SM_CONFIRM[1].search(data) is not None
    )


def has_cc_key(data: bytes) -> bool:
    """Is there a dict entry keyed like a compute capability (`9: `, `100: `, `"9.0": `, `(9, 0): `)?"""
    for tok in (b"9: ", b"10: ", b"12: "):
        if _keyed(data, tok, lambda d, i: i == 0 or d[i - 1] in _BEFORE_KEY):
            return True
    if _keyed(data, b"0: ", _number_key):
        return True
    for tok in (b'.0": ', b".0': ", b", 0): "):
        if tok in data:
            return True
    return b"sm_" in data and re.search(rb"[\"']sm_?\d{2,3}[af]?[\"']\s*:", data) is not None


def _number_key(data: bytes, i: int) -> bool:
    for width in (2, 3):
        start = i + 1 - width
        if (
            start >= 0
            and data[start : i + 1] in _KNOWN_NUMBERS
            and (start == 0 or data[start - 1] in _BEFORE_KEY)
        ):
            return True
    return False


def _keyed(data: bytes, tok: bytes, ok: object) -> bool:
    i = data.find(tok)
    tries = 0
    while i != -1 and tries < 500:
        if ok(data, i):  # type: ignore[operator]
            return True
        i = data.find(tok, i + 1)
        tries += 1
    return False


def worth_parsing(data: bytes) -> bool:
    return mentions_capability(data) or has_cc_key(data)
