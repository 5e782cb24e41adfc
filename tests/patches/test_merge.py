"""`merge_many`: many `git merge-file`s at once give exactly what one `git merge-file` each gives,
in the jobs' order, whether the inputs travel as in-memory files or as files on disk."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from capgap.patches import merge
from capgap.patches.merge import Merge, merge3, merge_many

BASE = "".join(f"V{n} = {n}\n" for n in range(40))


def _job(i: int, conflict: bool) -> merge.MergeJob:
    current = BASE.replace("V5 = 5", f"V5 = {500 + i}")  # upstream, far from the patch
    if conflict:
        current = current.replace("V20 = 20", "V20 = -1")  # upstream rewrote the patched line
    theirs = BASE.replace("V20 = 20", f"V20 = {2000 + i}")
    return (current.encode(), BASE.encode(), theirs.encode(), (f"f{i} (current)", "pristine", f"patch p{i}"))


def _git_merge_file(tmp: Path, job: merge.MergeJob) -> Merge:
    paths = []
    for name, data in zip(("current", "base", "theirs"), job[:3], strict=True):
        (tmp / name).write_bytes(data)
        paths.append(str(tmp / name))
    labels = [arg for label in job[3] for arg in ("-L", label)]
    proc = subprocess.run(["git", "merge-file", "-p", "--diff3", *labels, *paths], capture_output=True)
    return Merge(proc.stdout, proc.returncode)


@pytest.mark.parametrize("in_memory", [True, False], ids=["memfd", "temp-files"])
def test_merge_many_equals_one_git_merge_file_per_job_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: bool
) -> None:
    if in_memory and not merge._IN_MEMORY:
        pytest.skip("no memfd_create on this system")
    monkeypatch.setattr(merge, "_IN_MEMORY", in_memory)
    jobs = [_job(i, conflict=i % 3 == 0) for i in range(12)]
    results = merge_many(jobs)
    assert results == [_git_merge_file(tmp_path, job) for job in jobs]
    assert [r.conflicts for r in results] == [1 if i % 3 == 0 else 0 for i in range(12)]
    clean = results[1].text.decode()
    assert "V5 = 501\n" in clean and "V20 = 2001\n" in clean
    assert "<<<<<<< f0 (current)" in results[0].text.decode()


def test_merge3_is_merge_many_of_one() -> None:
    job = _job(7, conflict=False)
    assert merge3(*job) == merge_many([job])[0]
    assert merge_many([]) == []
