"""Property: for any table layout, an upsert parses, adds exactly one entry, and twice == once."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from capgap.arch import parse_arch
from capgap.semantic.keys import format_key
from capgap.semantic.upsert import upsert_source

CCS = ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]
STYLES = ["number-int", "dotted-str", "sm-str", "tuple"]


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, str]:
    style = draw(st.sampled_from(STYLES))
    ccs = draw(st.lists(st.sampled_from(CCS), min_size=0, max_size=5, unique=True))
    target = draw(st.sampled_from([c for c in CCS if c not in ccs]))
    keys = [format_key(parse_arch(c), style) for c in ccs]
    values = [draw(st.sampled_from(["1", "[6, 8]", "64 * MiB", "{2: 1}"])) for _ in ccs]
    multiline = draw(st.booleans())
    trailing = draw(st.booleans())
    comments = draw(st.booleans())
    indent = draw(st.sampled_from(["  ", "    "]))
    if multiline and keys:
        n = len(keys)
        lines = [
            f"{indent}{k}: {v}" + ("," if i < n - 1 or trailing else "") + ("  # c" if comments else "")
            for i, (k, v) in enumerate(zip(keys, values, strict=True))
        ]
        body = "{\n" + "\n".join(lines) + "\n}"
    else:
        entries = ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True))
        body = "{" + entries + ("," if trailing and keys else "") + "}"
    return f"MiB = 1 << 20\nT = {body}\n", target


@settings(max_examples=60, deadline=None, database=None)
@given(tables(), st.booleans())
def test_upsert_properties(case: tuple[str, str], with_note: bool) -> None:
    source, target = case
    note = "copied by capgap" if with_note else None
    out, changes = upsert_source(source, "T", parse_arch(target), "[1, 2]", comment=note)
    old = ast.parse(source).body[1].value
    new = ast.parse(out).body[1].value
    assert isinstance(old, ast.Dict) and isinstance(new, ast.Dict)
    assert len(new.keys) == len(old.keys) + 1
    added = [ast.dump(k) for k in new.keys if ast.dump(k) not in {ast.dump(o) for o in old.keys}]
    assert len(added) == 1
    again, _ = upsert_source(out, "T", parse_arch(target), "[1, 2]", comment=note)
    assert again == out
    if note:
        assert out.count("# copied by capgap") == 1
