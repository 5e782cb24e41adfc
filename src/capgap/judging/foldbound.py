"""Bounds on constant folding: what a table value or a condition folds to stays small, and a
fold that would not is refused before it is computed (never a MemoryError, never gigabytes)."""

from __future__ import annotations

from typing import Any

FOLD_MAX_ITEMS = 1 << 16  # a folded string or list longer than this is no table value worth its memory
FOLD_MAX_BITS = 1 << 12  # nor an int wider than this (a chain of `**` would grow without end)


def _size(v: Any) -> int:
    return len(v) if isinstance(v, (str, bytes, list, tuple)) else 0


def _bits(v: Any) -> int:
    return abs(v).bit_length() if isinstance(v, int) else 0


def mul(a: Any, b: Any) -> Any:
    """a * b, refused (ValueError) before it is computed when the result would be huge:
    `"x" * (1 << 32)` is 60 bytes of source and 4 GB of memory."""
    seq, n = (a, b) if isinstance(a, (str, bytes, list, tuple)) else (b, a)
    if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int):
        too_large = len(seq) * n > FOLD_MAX_ITEMS
    else:
        too_large = _bits(a) + _bits(b) > FOLD_MAX_BITS
    if too_large:
        raise ValueError("too large")
    return a * b


def pow_(a: Any, b: Any) -> Any:
    if abs(b) >= 64 or _bits(a) * abs(b) > FOLD_MAX_BITS:
        return None
    return a**b


def lshift(a: Any, b: Any) -> Any:
    return a << b if b < 64 and _bits(a) + b <= FOLD_MAX_BITS else None


def add(a: Any, b: Any) -> Any:
    if _size(a) + _size(b) > FOLD_MAX_ITEMS:
        raise ValueError("too large")
    return a + b
