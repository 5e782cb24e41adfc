"""Which Python files of a tree name a word at all, and their text: one `grep -lwF` over the tree
(a fixed-string search in C), read in Python only where grep is missing or fails."""

from __future__ import annotations

import os
import re
import subprocess  # nosec B404 - grep, with fixed arguments and no shell
from collections.abc import Iterable, Iterator

from capgap.reading.grepfilter import batches, grep_path


def files_naming(paths: dict[str, str], words: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(relative path, text) of each Python file of `paths` (relative path -> path) that holds one
    of `words` as a whole word, read as asked for (a caller may stop early). Unreadable or
    undecodable files are left out."""
    words = sorted(set(words))
    python = {rel: path for rel, path in paths.items() if rel.endswith(".py")}
    if not words or not python:
        return
    hits = _grep_hits(list(python.values()), words)
    if hits is None:  # no usable grep: the same answer, read in Python
        pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b")
        hits = {path for path in python.values() if pattern.search(_read(path) or b"")}
    for rel, path in python.items():
        if path in hits and (data := _read(path)) is not None:
            try:
                yield rel, data.decode("utf-8")
            except UnicodeDecodeError:
                continue


def text_of(path: str) -> str | None:
    """A file's text, or None when it cannot be read or is no UTF-8."""
    data = _read(path)
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _grep_hits(files: list[str], words: list[str]) -> set[str] | None:
    """The files grep names, or None when grep is missing, cannot start or reports an error."""
    grep = grep_path()
    if grep is None:
        return None
    args = [grep, "-lwFZ", *(x for w in words for x in ("-e", w)), "--"]
    found: set[str] = set()
    for batch in batches(files, 1):
        try:
            proc = subprocess.run([*args, *batch], capture_output=True, check=False)  # nosec B603
        except OSError:  # grep could not be started: read in Python
            return None
        if proc.returncode > 1:  # 0: some named, 1: none; 2: an error on some file
            return None
        found.update(os.fsdecode(name) for name in proc.stdout.split(b"\0") if name)
    return found
