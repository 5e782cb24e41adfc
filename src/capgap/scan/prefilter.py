"""Byte-level pre-filter: which files (and which of their statements) can matter at all.

Most of an engine's files never mention a capability; reading their bytes is all they cost.
Plain substring tests (`bytes.__contains__`, a fast C search) decide; regular expressions run
only to confirm a hit, and only where they start with a literal.
"""

from __future__ import annotations

import re

# Any one of these makes a file (or statement) worth parsing for gates and table reads.
CAP_TOKENS = (
    b"apabilit",
    b"CAPABILIT",
    b"lackwell",
    b"hopper",
    b"Hopper",
    b"device_sm",
    b"rch_list",
    b"RCH_LIST",
    b"cuda_arch",
    b"CUDA_ARCH",
    b"sm_version",
    b"gencode",
)
_SM_CONFIRM = (re.compile(rb"sm_?\d\d"), re.compile(rb"SM_?\d\d"))
# Dict entries keyed like a compute capability: ` 9: `, `{10: `, ` 100: `, `"9.0": `, `(9, 0): `, `"sm_90": `.
CC_KEY_TOKENS = (
    b" 9: ",
    b"{9: ",
    b" 10: ",
    b"{10: ",
    b" 12: ",
    b"{12: ",
    b" 90: ",
    b"{90: ",
    b" 100: ",
    b"{100: ",
    b'.0": ',
    b".0': ",
    b", 0): ",
)
_SM_KEY = re.compile(rb"[\"']sm_?\d{2,3}[af]?[\"']\s*:")


def mentions_capability(data: bytes) -> bool:
    if any(tok in data for tok in CAP_TOKENS):
        return True
    return (b"sm" in data and _SM_CONFIRM[0].search(data) is not None) or (
        b"SM" in data and _SM_CONFIRM[1].search(data) is not None
    )


def has_cc_key(data: bytes) -> bool:
    """Is there a dict entry keyed like a compute capability?"""
    if any(tok in data for tok in CC_KEY_TOKENS):
        return True
    return b"sm_" in data and _SM_KEY.search(data) is not None


def worth_parsing(data: bytes) -> bool:
    return mentions_capability(data) or has_cc_key(data)


def hit_offsets(data: bytes) -> list[int]:
    """Sorted byte offsets of every capability token and capability-like dict key in `data`."""
    offsets: list[int] = []
    for tok in CAP_TOKENS + CC_KEY_TOKENS:
        i = data.find(tok)
        while i != -1:
            offsets.append(i)
            i = data.find(tok, i + 1)
    for pattern in (*_SM_CONFIRM, _SM_KEY):
        offsets.extend(m.start() for m in pattern.finditer(data))
    offsets.sort()
    return offsets
