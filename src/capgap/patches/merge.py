"""Three-way merges through `git merge-file` (no hand-written merge), and the two heuristics
around them: was the change upstreamed, and did upstream move the file."""

from __future__ import annotations

import contextlib
import difflib
import os
import subprocess
import tempfile
from dataclasses import dataclass

from capgap.errors import EnvironmentProblem
from capgap.patches import merge_batch
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


MergeJob = tuple[bytes, bytes, bytes, tuple[str, str, str]]  # current, base, theirs, labels

# Inputs go to git as /dev/fd/N of in-memory files (memfd): creating three files on disk per
# merge cost more than the merge itself. Elsewhere, plain files in a temp directory.
_IN_MEMORY = hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


def _workers() -> int:
    # Each merge is a short `git merge-file` process: a few more threads than cores keep every
    # core busy while others fork, read their pipes or wait.
    return max(2, min(8, 2 * (os.cpu_count() or 1)))


def merge3(current: bytes, base: bytes, theirs: bytes, labels: tuple[str, str, str]) -> Merge:
    """git merge-file: apply base->theirs onto current; markers name `labels`."""
    return merge_many([(current, base, theirs, labels)])[0]


def merge_many(jobs: list[MergeJob]) -> list[Merge]:
    """Every job's `git merge-file` result, in order. Many small files merge in one batch of a
    few git processes (merge_batch.py); the rest, and any that conflict there, get one
    `git merge-file` each, run concurrently by a bounded pool."""
    results: list[Merge | None] = [None] * len(jobs)
    picked = merge_batch.worth_batching([job[:3] for job in jobs]) if _batch_works else []
    if picked:
        try:
            texts = merge_batch.merge_clean([jobs[i][:3] for i in picked])
        except merge_batch.BatchUnavailable:
            _no_batch()
        else:
            for i, text in zip(picked, texts, strict=True):
                results[i] = None if text is None else Merge(text, 0)
    rest = [i for i, merge in enumerate(results) if merge is None]
    for i, merge in zip(rest, _merge_each([jobs[i] for i in rest]), strict=True):
        results[i] = merge
    return [merge for merge in results if merge is not None]


def _no_batch() -> None:
    """This git cannot batch (e.g. older than `apply --3way --cached`): stop trying."""
    global _batch_works
    _batch_works = False


_batch_works = True


def _merge_each(jobs: list[MergeJob]) -> list[Merge]:
    """One `git merge-file` per job, run concurrently by a bounded pool; results in order."""
    if not jobs:
        return []
    with contextlib.nullcontext(None) if _IN_MEMORY else tempfile.TemporaryDirectory(prefix="capgap-") as tmp:

        def run(job: MergeJob) -> Merge:
            return _merge(job, tmp)

        if len(jobs) == 1:
            return [run(jobs[0])]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(_workers(), len(jobs))) as pool:
            return list(pool.map(run, jobs))


def _merge(job: MergeJob, tmp: str | None) -> Merge:
    """One merge; its inputs in memfds (tmp None) or in files under tmp."""
    cmd = ["git", "merge-file", "-p", "--diff3"]
    for label in job[3]:
        cmd += ["-L", label]
    fds: list[int] = []
    try:
        for data in job[:3]:
            if tmp is None:
                fds.append(os.memfd_create("capgap-merge", os.MFD_CLOEXEC))
                path = f"/dev/fd/{fds[-1]}"
            else:
                fd, path = tempfile.mkstemp(dir=tmp)
                fds.append(fd)
            view = memoryview(data)
            while view:
                view = view[os.write(fds[-1], view) :]
            cmd.append(path)
        try:
            proc = subprocess.run(cmd, capture_output=True, check=False, pass_fds=fds if tmp is None else ())
        except OSError as exc:
            raise EnvironmentProblem(f"cannot run git merge-file: {exc}") from exc
    finally:
        for fd in fds:
            os.close(fd)
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
