"""Directories no walk of a target enters: version control and byte-code caches (every walk), and
the tools' caches and environments a source tree may hold (the source scan, not the binaries'
check: a wheel's libraries are never there, an environment's may be)."""

from __future__ import annotations

VCS_DIRS = frozenset((".git", "__pycache__", ".hg", ".svn"))
TOOL_DIRS = frozenset(
    (".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".venv", "node_modules", ".eggs")
)
