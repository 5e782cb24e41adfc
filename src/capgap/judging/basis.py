"""The deciding text of a decision, for fingerprints: its test unparsed, so that a reformatted
statement (split over lines, other quotes, a comment added) reads the same (scan/fingerprint.py)."""

from __future__ import annotations

import ast

from capgap.judging.records import Decision


def test_text(test: object) -> str:
    if not isinstance(test, ast.AST):
        return ""
    try:
        return ast.unparse(test)
    except (ValueError, TypeError, AttributeError, RecursionError):  # a node unparse cannot write
        return ""


def decision_text(d: Decision, arm: int) -> str:
    """Arm `arm`'s test; for an else (no test of its own) the tests of the whole decision."""
    own = test_text(d.arms[arm].test) if 0 <= arm < len(d.arms) else ""
    return own or " | ".join(t for t in (test_text(a.test) for a in d.arms) if t)
