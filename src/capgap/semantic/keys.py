"""Key styles of capability tables: read a key as an arch, write an arch as a key.

Engines key their tables differently; a key capgap inserts must look like its neighbours:
"major-int" `12`, "number-int" `120`, "dotted-str" `"12.0"`, "sm-str" `"sm_120"`, "tuple" `(12, 0)`.
"""

from __future__ import annotations

import ast
import re

from capgap.arch import ArchSpec, try_parse_arch

STYLES = ("major-int", "number-int", "dotted-str", "sm-str", "tuple")

_DOTTED = re.compile(r"^\d{1,2}\.\d[af]?$")
_SM = re.compile(r"^sm_?\d{2,3}[af]?$", re.I)


def key_style_of(key_src: str) -> str | None:
    """The style of one key's source text, or None when it is no arch key."""
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
    if style is None or arch_of_key(key_src) is None:
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
    styles = {key_style_of(k) for k in key_srcs}
    if len(styles) != 1 or None in styles:
        return None
    return styles.pop()


def _quote_of(template: str | None) -> str:
    if template and template.strip()[:1] in ("'", '"'):
        return template.strip()[0]
    return '"'


def format_key(spec: ArchSpec, style: str, template: str | None = None) -> str:
    """Source text of `spec` as a key of `style`; `template` (a neighbour key) gives the quotes."""
    q = _quote_of(template)
    if style == "major-int":
        return str(spec.major)
    if style == "number-int":
        return str(spec.number)
    if style == "dotted-str":
        return f"{q}{spec.cc}{spec.suffix}{q}"
    if style == "sm-str":
        prefix = "sm_"
        if template:
            m = re.match(r"^['\"]?(sm_?)", template.strip(), re.I)
            prefix = m.group(1) if m else prefix
        return f"{q}{prefix}{spec.number}{spec.suffix}{q}"
    if style == "tuple":
        return f"({spec.major}, {spec.minor})"
    raise ValueError(f"unknown key style {style!r}")


def same_arch(a: ArchSpec, b: ArchSpec, style: str) -> bool:
    """Whether two keys name one table slot: "major-int" tables know only the major."""
    if style == "major-int":
        return a.major == b.major
    return (a.major, a.minor, a.suffix) == (b.major, b.minor, b.suffix)


def order_of(spec: ArchSpec) -> tuple[int, int, str]:
    return (spec.major, spec.minor, spec.suffix)
