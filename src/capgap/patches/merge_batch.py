"""Many three-way merges in five git processes instead of one `git merge-file` per file.

One process per file was the cost of re-applying patches over an upgraded tree (~3 ms each).
Here every job's three versions go into a scratch repository (one `git fast-import`), the index
is set to the current versions (`git read-tree`), the base->theirs changes are written as one
diff (`git diff-tree`) and `git apply --3way --cached` merges them all in one process; one
`git cat-file --batch` reads the clean results. Git still does every merge, with the machinery
of `git merge-file` (xdiff's merge, Myers diff, diff3 style). Jobs that conflict or hold binary
data are left to the caller, who runs `git merge-file` on them, so conflict output stays
exactly that of `git merge-file`. Needs git >= 2.32 (`apply --3way --cached`, merging first);
an older git refuses the options and the caller merges file by file.

Why not `git merge-tree --write-tree`: its merges (merge-ort) diff with the histogram algorithm
(hard-coded in git 2.39), `git merge-file` with Myers; on files with repeated lines
the two disagree (a clean merge for one is a conflict for the other), so results would depend
on how many files were merged together.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

# Job i's three versions sit at path str(i): base, ours (current) and theirs are three commits.
_COMMITTER = b"committer capgap <capgap> 0 +0000\ndata 0\n"

# `git merge-file --diff3` merges at xdiff's "eager" level; git apply's merge does so with the
# diff3 style only (its default, "zealous", resolves some conflicts that merge-file reports).
# Nothing from the user's config or attributes may change a merge. The objects live a few
# milliseconds: no compression, no delta search, no loose objects out of fast-import, no fsync.
_CONFIG = [
    arg
    for setting in (
        "merge.conflictStyle=diff3",
        "core.attributesFile=/dev/null",
        "core.compression=0",
        "fastimport.unpackLimit=0",
        "core.fsync=none",
    )
    for arg in ("-c", setting)
]

# A scratch repository in memory where there is one: git writes and reads back every object.
_SCRATCH = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None

# When the batch pays (measured with git 2.39 on 2 cores): a `git merge-file` costs ~1.8 ms of
# wall time whatever the file's size, the batch ~20 ms plus ~0.03 ms per KiB of input (git hashes
# and copies each version several times). So big files stay with merge-file, and a batch is
# made only when the small files in it save more than its fixed cost.
_PROCESS_MS, _BATCH_MS, _BATCH_MS_PER_KIB = 1.8, 20.0, 0.03
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
    from concurrent.futures import ThreadPoolExecutor

    size = -(-len(jobs) // parts)
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
        return [text for part in pool.map(_merge_clean, chunks) for text in part]


def _merge_clean(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bytes | None]:
    try:
        return _merge_in_scratch(jobs)
    except OSError as exc:  # e.g. a full /dev/shm
        raise BatchUnavailable(f"scratch repository: {exc}") from exc


def _merge_in_scratch(jobs: list[tuple[bytes, bytes, bytes]]) -> list[bytes | None]:
    with tempfile.TemporaryDirectory(prefix="capgap-merge-", dir=_SCRATCH) as tmp:
        env = _scratch_repo(tmp)
        _import(jobs, env)
        _git(["read-tree", "ours"], env)
        diff = _git(["diff-tree", "-p", "--full-index", "base", "theirs"], env)
        changed = {i for i, (_, base, theirs) in enumerate(jobs) if base != theirs}
        clean = (_apply(diff, changed, env) if changed else set()) | (set(range(len(jobs))) - changed)
        order = sorted(clean)
        texts = _read_blobs([f":0:{i}" for i in order], env) if order else []
    out: list[bytes | None] = [None] * len(jobs)
    for i, text in zip(order, texts, strict=True):
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


def _git(args: list[str], env: dict[str, str], data: bytes = b"", ok: tuple[int, ...] = (0,)) -> bytes:
    return _run(args, env, data, ok).stdout


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


def _import(jobs: list[tuple[bytes, bytes, bytes]], env: dict[str, str]) -> None:
    """Three commits: base, and ours (current) and theirs on top of it."""
    stream: list[bytes] = []
    marks: dict[bytes, int] = {}

    def mark(data: bytes) -> int:
        if data not in marks:
            marks[data] = len(marks) + 1
            stream.append(b"blob\nmark :%d\ndata %d\n" % (marks[data], len(data)))
            stream.append(data)
            stream.append(b"\n")
        return marks[data]

    sides = [[mark(job[side]) for job in jobs] for side in (1, 0, 2)]  # base, ours, theirs
    for name, blobs in zip((b"base", b"ours", b"theirs"), sides, strict=True):
        stream.append(b"commit refs/heads/%s\n%s" % (name, _COMMITTER))
        if name != b"base":
            stream.append(b"from refs/heads/base\n")
        stream.extend(b"M 100644 :%d %d\n" % (blob, i) for i, blob in enumerate(blobs))
        stream.append(b"\n")
    _git(["fast-import", "--quiet", "--done", "--depth=0"], env, b"".join(stream) + b"done\n")


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


def _read_blobs(names: list[str], env: dict[str, str]) -> list[bytes]:
    out = _git(["cat-file", "--batch"], env, "".join(f"{n}\n" for n in names).encode())
    blobs, pos = [], 0
    for _ in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise BatchUnavailable(f"git cat-file: {out[pos:end]!r}")
        size = int(header[2])
        blobs.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return blobs
