"""Three-way merges through `git merge-file` (no hand-written merge), and the two heuristics
around them: was the change upstreamed, and did upstream move the file."""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from dataclasses import dataclass

from capgap.errors import EnvironmentProblem
from capgap.patches.diff import added_and_removed


@dataclass(frozen=True)
class Merge:
    text: bytes  # the merged content (with conflict markers when conflicts > 0)
    conflicts: int

    def conflict_regions(self) -> str:
        """Only the conflicting regions, both sides shown (diff3 style, with the base)."""
        out: list[str] = []
        inside = False
        for line in self.text.decode("utf-8", "replace").splitlines(keepends=True):
            if line.startswith("<<<<<<< "):
                inside = True
            if inside:
                out.append(line)
            if line.startswith(">>>>>>> "):
                inside = False
        return "".join(out)


def merge3(current: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]) -> Merge:
    """git merge-file: apply base->theirs onto current; markers name `labels`."""
    with tempfile.TemporaryDirectory(prefix="capgap-merge-") as tmp:
        paths = []
        for fname, data in (("current", current), ("base", base), ("theirs", theirs)):
            path = os.path.join(tmp, fname)
            with open(path, "wb") as fh:
                fh.write(data)
            paths.append(path)
        cmd = ["git", "merge-file", "-p", "--diff3"]
        for label in labels:
            cmd += ["-L", label]
        try:
            proc = subprocess.run(cmd + paths, capture_output=True, check=False)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot run git merge-file: {exc}") from exc
    if proc.returncode < 0 or proc.returncode >= 128:
        raise EnvironmentProblem(f"git merge-file failed: {proc.stderr.decode(errors='replace').strip()}")
    return Merge(proc.stdout, proc.returncode)


def change_present(current: bytes | None, pristine: bytes | None, patched: bytes | None) -> bool:
    """Does `current` already carry what the patch adds (and lack what it removes)?"""
    added, removed = added_and_removed(pristine, patched)
    if not added and not removed:
        return False
    have = {s.strip() for s in (current or b"").decode("utf-8", "replace").splitlines()}
    return all(a in have for a in added) and not any(r in have and r not in added for r in removed)


def find_moved(versions: list[bytes], rel: str, candidates: list[str], read: object) -> str | None:
    """Upstream deleted rel: the same-named file most like its pristine or patched text, if close."""
    base = rel.rsplit("/", 1)[-1]
    same_name = [c for c in candidates if c != rel and c.rsplit("/", 1)[-1] == base]
    if not same_name:
        return None
    wants = [v.decode("utf-8", "replace").splitlines() for v in versions]
    best, best_ratio = None, 0.5
    for cand in same_name:
        data = read(cand)  # type: ignore[operator]
        if data is None:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        ratio = max(difflib.SequenceMatcher(None, want, lines).ratio() for want in wants)
        if ratio > best_ratio:
            best, best_ratio = cand, ratio
    return best
