"""Many three-way merges in one `git apply` process instead of one `git merge-file` per file.

One process per file was the cost of re-applying patches over an upgraded tree (~3 ms each).
Here every job's three versions go into a scratch repository as one pack, the index
is set to the current versions (both files written here, gitfiles.py), the base->theirs changes
are written as one diff, and `git apply --3way --cached` merges them all in one process; the
clean results are read back from the index and the loose objects git wrote. Git still does
every merge, with the machinery of `git merge-file` (xdiff's merge, Myers diff, diff3 style).
Jobs that conflict or hold binary data are left to the caller, who runs `git merge-file` on
them, so conflict output stays exactly that of `git merge-file`. Needs git >= 2.32
(`apply --3way --cached`, merging first); an older git refuses the options and the caller
merges file by file.

Why not `git merge-tree --write-tree`: its merges (merge-ort) diff with the histogram algorithm
(hard-coded in git 2.39), `git merge-file` with Myers; on files with repeated lines
the two disagree (a clean merge for one is a conflict for the other), so results would depend
on how many files were merged together.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Callable

from capgap.patches import gitfiles

# `git merge-file --diff3` merges at xdiff's "eager" level; git apply's merge does so with the
# diff3 style only (its default, "zealous", resolves some conflicts that merge-file reports).
# Nothing from the user's config or attributes may change a merge. The objects live a few
# milliseconds: no compression, no fsync. Job i sits at path str(i).
_CONFIG = [
    arg
    for setting in (
        "merge.conflictStyle=diff3",
        "core.attributesFile=/dev/null",
        "core.compression=0",
        "core.fsync=none",
        "core.warnAmbiguousRefs=false",  # a full object id on a diff's index line is no ref name
    )
    for arg in ("-c", setting)
]

# A scratch repository in memory where there is one: git writes and reads back every object.
_SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None

# When the batch pays (measured with git 2.39 on 2 cores): a `git merge-file` costs ~1.8 ms of
# wall time whatever the file's size, the batch ~6 ms (one process) plus ~0.03 ms per KiB of input
# (each version is hashed and copied several times). So big files stay with merge-file, and a batch is
# made only when the small files in it save more than its fixed cost.
_PROCESS_MS, _BATCH_MS, _BATCH_MS_PER_KIB = 1.8, 6.0, 0.03
_JOBS_PER_PART = 16  # a batch is split into parts run side by side (git's work is one thread)


class BatchUnavailable(Exception):
    """This git cannot do the batch (too old, or it failed): merge file by file instead."""


def _has_nul(data: bytes) -> bool:
    """Binary for git (a NUL in the first 8000 bytes: `git merge-file` refuses the file), or a
    NUL further on, which a text diff through `git apply` need not survive."""
    return b"\0" in data


def worth_batching(jobs: list[tuple[bytes, bytes, bytes]]) -> list[int]:
    """The jobs to merge in a batch: small text files, when they are enough to pay for it."""
    cost = {i: sum(map(len, job)) / 1024 * _BATCH_MS_PER_KIB for i, job in enumerate(jobs)}
    picked = [i for i, job in enumerate(jobs) if cost[i] < _PROCESS_MS and not any(map(_has_nul, job))]
    saved = sum(_PROCESS_MS - cost[i] for i in picked)
    return picked if saved > _BATCH_MS else []


def merge_clean(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bytes | None]:
    """(current, base, theirs) -> the merged bytes of each job that merged clean, else None."""
    parts = max(1, min(os.cpu_count() or 1, len(jobs) // _JOBS_PER_PART))
    if parts == 1:
        return _merge_clean(jobs)
    size = -(-len(jobs) // parts)
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    results: list[list[bytes | None] | BaseException] = [[] for _ in chunks]

    def run(n: int) -> None:
        try:
            results[n] = _merge_clean(chunks[n])
        except BaseException as exc:  # handed to the caller's thread below
            results[n] = exc

    # Plain threads: concurrent.futures (and the logging it imports) would cost ~10 ms to import.
    threads = [threading.Thread(target=run, args=(n,)) for n in range(1, len(chunks))]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    out: list[bytes | None] = []
    for part in results:
        if isinstance(part, BaseException):
            raise part
        out += part
    return out


def _merge_clean(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bytes | None]:
    try:
        return _merge_in_scratch(jobs)
    except OSError as exc:  # e.g. a full /dev/shm
        raise BatchUnavailable(f"scratch repository: {exc}") from exc


def _merge_in_scratch(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bytes | None]:
    with tempfile.TemporaryDirectory(prefix="capgap-merge-", dir=_SCRATCH) as tmp:
        env = _scratch_repo(tmp)
        gitdir = env["GIT_DIR"]
        # theirs too: git would otherwise write each as a loose object when rebuilding it
        known = {gitfiles.oid(data): data for job in jobs for data in job}
        ids = {data: name for name, data in known.items()}
        gitfiles.write_pack(gitdir, known)
        gitfiles.write_index(env["GIT_INDEX_FILE"], {str(i): ids[job[0]] for i, job in enumerate(jobs)})
        changed = [i for i, (_, base, theirs) in enumerate(jobs) if base != theirs]
        diff = b"".join(
            _base_to_theirs_diff(str(i), ids[jobs[i][1]], ids[jobs[i][2]], *jobs[i][1:]) for i in changed
        )
        clean = _apply(diff, set(changed), env) if changed else set()
        merged = gitfiles.read_index(env["GIT_INDEX_FILE"]) if clean else {}
        if merged is None:
            raise BatchUnavailable("git apply wrote an index of an unknown version")
        out: list[bytes | None] = [job[0] if job[1] == job[2] else None for job in jobs]
        for i in clean:
            name = merged.get(str(i))
            text = None if name is None else known.get(name)
            if text is None and name is not None:  # git knows the empty blob without storing it
                text = b"" if name == gitfiles.EMPTY else gitfiles.read_loose(gitdir, name)
            if text is None:  # git did not leave what it says it merged: do not trust the batch
                raise BatchUnavailable(f"git apply --3way left no merged blob for job {i}")
            out[i] = text
    return out


def _scratch_repo(tmp: str) -> dict[str, str]:
    # What `git init --bare` would make that git needs, without spending a process on it.
    gitdir = os.path.join(tmp, "git")
    os.makedirs(os.path.join(gitdir, "objects"))
    os.mkdir(os.path.join(gitdir, "refs"))
    with open(os.path.join(gitdir, "HEAD"), "w") as head:
        head.write("ref: refs/heads/base\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_EXEC_PATH"}
    env.update(
        GIT_DIR=gitdir,
        GIT_INDEX_FILE=os.path.join(tmp, "index"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",  # apply's messages are parsed below
        LANGUAGE="C",
        # glibc would grow and trim git's heap at every object (brk, page faults): ~20% of the
        # batch's CPU time. A larger step and trim threshold; the memory is freed at exit.
        MALLOC_TOP_PAD_=str(16 << 20),
        MALLOC_TRIM_THRESHOLD_=str(64 << 20),
    )
    return env


def _run(
    args: list[str], env: dict[str, str], data: bytes, ok: tuple[int, ...]
) -> subprocess.CompletedProcess[bytes]:
    try:
        proc = subprocess.run(["git", *_CONFIG, *args], input=data, capture_output=True, env=env, check=False)
    except OSError as exc:
        raise BatchUnavailable(f"cannot run git: {exc}") from exc
    if proc.returncode not in ok:
        raise BatchUnavailable(f"git {args[0]}: {proc.stderr.decode(errors='replace').strip()}")
    return proc


def _apply(diff: bytes, changed: set[int], env: dict[str, str]) -> set[int]:
    """Merge every changed job into the index; the jobs that merged clean.

    git apply names the outcome of each path; anything else it says (a direct application
    instead of a merge, an error) means the batch cannot be trusted.
    """
    proc = _run(["apply", "--3way", "--cached", "--whitespace=nowarn", "-"], env, diff, ok=(0, 1))
    clean: set[int] = set()
    seen: set[int] = set()
    for line in proc.stderr.decode(errors="replace").splitlines():
        if line.startswith("Applied patch to '") and line.endswith(("' cleanly.", "' with conflicts.")):
            path = line[len("Applied patch to '") :].split("'", 1)[0]
            if not path.isdigit():
                raise BatchUnavailable(f"git apply --3way: {line}")
            seen.add(int(path))
            if line.endswith("cleanly."):
                clean.add(int(path))
        elif not (line.startswith("U ") and line[2:].isdigit()):
            raise BatchUnavailable(f"git apply --3way: {line}")
    if seen != changed:
        raise BatchUnavailable("git apply --3way did not report every file")
    return clean


def _lines(text: bytes) -> int:
    return text.count(b"\n") + (1 if text and not text.endswith(b"\n") else 0)


def _emit(sign: bytes, text: bytes) -> bytes:
    """Whole lines as diff lines starting with sign (git's marker after a last line without a
    newline)."""
    if not text:
        return b""
    lines = text.split(b"\n")
    last = lines.pop()
    body = sign + (b"\n" + sign).join(lines) + b"\n" if lines else b""
    return body + sign + last + b"\n\\ No newline at end of file\n" if last else body


def _longest(same: Callable[[int], bool], most: int) -> int:
    """The largest n <= most with same(n), for a same() that holds up to some n and no further."""
    low, high = 0, most
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if same(mid) else (low, mid - 1)
    return low


def _base_to_theirs_diff(path: str, base_oid: str, theirs_id: str, base: bytes, theirs: bytes) -> bytes:
    """A diff from base to theirs: one hunk from the first changed line to the last, with up to
    three lines of context. `apply --3way` only uses it to rebuild theirs from base (found by its
    id on the index line) and then merges the three whole versions, so how the diff is cut
    changes no result; making it here costs no `git diff-tree` process. Byte offsets, found by
    bisection, instead of lists of lines: the files are read once, by C code."""
    most = min(len(base), len(theirs))
    common = _longest(lambda n: base[:n] == theirs[:n], most)
    head = base.rfind(b"\n", 0, common) + 1  # the whole lines before the first difference end here
    suffix = _longest(lambda n: base[len(base) - n :] == theirs[len(theirs) - n :], most - head)
    first_nl = base.find(b"\n", len(base) - suffix) if suffix else -1
    tail = len(base) - first_nl - 1 if first_nl >= 0 else 0  # bytes of whole lines common at the end
    start = head
    for _ in range(3):  # up to three lines of context before
        if start:
            start = base.rfind(b"\n", 0, start - 1) + 1
    end = len(base) - tail
    for _ in range(3):  # and after
        if end < len(base):
            nl = base.find(b"\n", end)
            end = len(base) if nl < 0 else nl + 1
    before, after = base[start:head], base[len(base) - tail : end]
    old, new = base[head : len(base) - tail], theirs[head : len(theirs) - tail]
    context = _lines(before) + _lines(after)
    old_n, new_n, first = context + _lines(old), context + _lines(new), base.count(b"\n", 0, start)
    name = path.encode()
    return b"".join(
        [
            b"diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n"
            % (name, name, base_oid.encode(), theirs_id.encode(), name, name),
            b"@@ -%d,%d +%d,%d @@\n" % (first + min(old_n, 1), old_n, first + min(new_n, 1), new_n),
            _emit(b" ", before),
            _emit(b"-", old),
            _emit(b"+", new),
            _emit(b" ", after),
        ]
    )
