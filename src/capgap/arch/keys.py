"""Write an arch as a capability-table key in the table's own style.

One writer for the scan (the key a finding says to add) and the fixer (the key it inserts):
"major-int" `12`, "number-int" `120`, "dotted-str" `"12.0"`, "sm-str" `"sm_120"`, "tuple" `(12, 0)`.
"""

from __future__ import annotations

import re

from capgap.arch.spelling import ArchSpec


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
