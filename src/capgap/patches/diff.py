"""Unified diffs (git style, so `git apply` accepts them) for human review of a patch."""

from __future__ import annotations

import difflib


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)


def _is_binary(data: bytes | None) -> bool:
    if data is None:
        return False
    if b"\x00" in data[:8192]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def file_diff(rel: str, before: bytes | None, after: bytes | None) -> str:
    """One file's git-style diff; None before/after means a new/deleted file."""
    head = [f"diff --git a/{rel} b/{rel}\n"]
    if before is None:
        head.append("new file mode 100644\n")
    elif after is None:
        head.append("deleted file mode 100644\n")
    if _is_binary(before) or _is_binary(after):
        return "".join(head) + f"Binary files a/{rel} and b/{rel} differ\n"
    old = "/dev/null" if before is None else f"a/{rel}"
    new = "/dev/null" if after is None else f"b/{rel}"
    out = list(head)
    body = difflib.unified_diff(_lines(before or b""), _lines(after or b""), old, new, n=3)
    for line in body:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def patch_diff(files: dict[str, tuple[bytes | None, bytes | None]]) -> str:
    return "".join(file_diff(rel, p, q) for rel, (p, q) in sorted(files.items()))


def added_and_removed(before: bytes | None, after: bytes | None) -> tuple[list[str], list[str]]:
    """The non-blank lines a change adds and removes (stripped), in order."""
    a, b = _lines(before or b""), _lines(after or b"")
    added: list[str] = []
    removed: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in {"replace", "delete"}:
            removed += [s.strip() for s in a[i1:i2] if s.strip()]
        if tag in {"replace", "insert"}:
            added += [s.strip() for s in b[j1:j2] if s.strip()]
    return added, removed
