"""Key styles of capability tables: read a key as an arch, write an arch as a key.

Engines key their tables differently; a key capgap inserts must look like its neighbours:
"major-int" `12`, "number-int" `120`, "dotted-str" `"12.0"`, "sm-str" `"sm_120"`, "tuple" `(12, 0)`.
"""

from __future__ import annotations

import ast
import re

from capgap.arch import ArchSpec, try_parse_arch
from capgap.arch.keys import format_key

__all__ = ["STYLES", "arch_of_key", "format_key", "key_style_of", "order_of", "same_arch", "table_style"]

STYLES = ("major-int", "number-int", "dotted-str", "sm-str", "tuple")

_DOTTED = re.compile(r"^\d{1,2}\.\d[af]?$")
_SM = re.compile(r"^sm_?\d{2,3}[af]?$", re.I)


def key_style_of(key_src: str, known: bool = True) -> str | None:
    """The style of one key's source text, or None when it is no arch key (`known=False`: also a
    key spelled like an arch the facts do not list yet, such as `"10.7"`)."""
    try:
        value = ast.literal_eval(key_src.strip())
    except (ValueError, SyntaxError):
        return None
    style: str | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        style = "major-int" if value < 20 else "number-int"
    elif isinstance(value, str):
        if _DOTTED.match(value):
            style = "dotted-str"
        elif _SM.match(value):
            style = "sm-str"
    elif isinstance(value, tuple) and len(value) == 2 and all(type(v) is int for v in value):
        style = "tuple"
    # a string spelled like an arch ("10.7") is one even when the facts do not list it yet; an
    # integer is only when it is a known arch (2, 4, 8 are world sizes)
    lenient = not known and style in {"dotted-str", "sm-str"}
    if style is None or (not lenient and arch_of_key(key_src) is None):
        return None
    return style


def arch_of_key(key_src: str) -> ArchSpec | None:
    """The arch a key names (`12` -> 12.0, `"sm_90a"` -> 9.0a, `(10, 3)` -> 10.3), or None."""
    try:
        value = ast.literal_eval(key_src.strip())
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, tuple):
        if len(value) != 2 or not all(type(v) is int for v in value):
            return None
        return try_parse_arch(f"({value[0]}, {value[1]})")
    if isinstance(value, (int, str)):
        return try_parse_arch(str(value))
    return None


def table_style(key_srcs: list[str]) -> str | None:
    """The one style all keys share, or None (mixed styles or non-arch keys: not a table)."""
    styles = {key_style_of(k, known=False) for k in key_srcs}
    if len(styles) != 1 or None in styles or not any(arch_of_key(k) for k in key_srcs):
        return None
    return styles.pop()


def same_arch(a: ArchSpec, b: ArchSpec, style: str) -> bool:
    """Whether two keys name one table slot: "major-int" tables know only the major."""
    if style == "major-int":
        return a.major == b.major
    return (a.major, a.minor, a.suffix) == (b.major, b.minor, b.suffix)


def order_of(spec: ArchSpec) -> tuple[int, int, str]:
    return (spec.major, spec.minor, spec.suffix)
