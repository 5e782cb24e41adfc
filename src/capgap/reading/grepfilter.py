"""Which files can matter at all, asked of `grep` (one pass in C over every byte).

The byte pre-filter (prefilter.py) searches each file for a dozen tokens, one Python-level pass
per token; on an engine tree most of a cold scan's reading went there. `grep -lEi` with the same
tokens as one regex answers "which files hold any of them" in one pass. For a directory
target `prefetch` starts `grep -r` at launch, while capgap loads, and `Stream` hands its answers
over as they come; a list of files (an installed dist) is asked with `candidates`, one grep per
core. grep is only a necessary condition, never the verdict: every file it names still goes
through the exact pre-filter. Without a usable grep (none on PATH, an error on any file,
CAPGAP_GREP=0) every file is read in Python, with the same findings.
"""

from __future__ import annotations

import os

from capgap.reading.tokens import (
    BACKEND_PATTERNS,
    CAP_TOKENS,
    CC_KEY_TOKENS,
    KERNEL_TOKENS,
    PROPERTY_TOKENS,
    SOURCE_PATTERNS,
)
from capgap.skipdirs import TOOL_DIRS, VCS_DIRS

TYPE_CHECKING = False  # typing's, without importing typing before grep starts (17 ms)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator
    from typing import IO

# Every token the pre-filter can act on (grep -i folds ASCII case, as bytes.lower() does):
# `sm_?\d\d` and `"sm_90":` keys start with `sm` + digit or `sm_` + digit.
TOKENS: tuple[bytes, ...] = (
    *CAP_TOKENS,
    *CC_KEY_TOKENS,
    *KERNEL_TOKENS,
    *PROPERTY_TOKENS,
    *(b"sm%d" % d for d in range(10)),
    *(b"sm_%d" % d for d in range(10)),
)
# The same tokens as one extended regex: GNU grep runs one alternation faster than 33 fixed
# strings under -i (0.29 s against 0.41 s over sglang's tree), and names the same files.
_ERE_SPECIAL = frozenset(b".[]()*+?{}|^$\\")
PATTERN = "|".join(
    [
        *(
            "".join("\\" + chr(c) if c in _ERE_SPECIAL else chr(c) for c in tok)
            for tok in CAP_TOKENS + CC_KEY_TOKENS + KERNEL_TOKENS + PROPERTY_TOKENS
        ),
        "sm_?[0-9]",
        *BACKEND_PATTERNS,
        *SOURCE_PATTERNS,
        # UTF-16/32 files (their byte-order mark; surrogate escapes are the raw bytes in argv):
        # no token is spelled in them as in ASCII, yet they are reported as skipped, not passed over
        "^\udcff\udcfe",
        "^\udcfe\udcff",
        "^..\udcfe\udcff",
    ]
)
_ARGS_BYTES = 96 * 1024  # per grep process: well inside any system's argument-size limit
SKIP_DIRS = VCS_DIRS | TOOL_DIRS  # never part of the code a target ships
_STARTED: dict[str, _Spawned] = {}


def grep_path() -> str | None:
    """grep's path on PATH (shutil.which's answer, without importing shutil before grep starts)."""
    if os.environ.get("CAPGAP_GREP", "1") == "0":
        return None
    for folder in os.get_exec_path():
        path = os.path.join(folder, "grep")
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


class _Spawned:
    """A started grep: its pid and stdout. Spawned by os.posix_spawn where there is one, so that
    grep starts before `subprocess` (and what it imports) has loaded; else by subprocess."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        if hasattr(os, "posix_spawn"):
            read_end, write_end = os.pipe()
            try:
                self.pid = os.posix_spawn(
                    argv[0],
                    argv,
                    env,
                    file_actions=[
                        (os.POSIX_SPAWN_DUP2, write_end, 1),
                        (os.POSIX_SPAWN_CLOSE, read_end),
                        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                    ],
                )
            except OSError:
                os.close(read_end)
                raise
            finally:
                os.close(write_end)
            self.stdout: IO[bytes] = os.fdopen(read_end, "rb")
            return
        import subprocess

        self._proc = subprocess.Popen(  # nosec: a fixed grep command, no shell
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        assert self._proc.stdout is not None
        self.pid, self.stdout = self._proc.pid, self._proc.stdout

    def wait(self) -> int:
        """grep's exit status (a signal's number, negated, when one ended it)."""
        self.stdout.close()
        if self._proc is not None:
            return self._proc.wait()
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)

    def kill(self) -> None:
        import contextlib
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.wait()


def _command(grep: str) -> list[str]:
    # -D skip: a FIFO or device named (or a link to one) is never read: it could block or never end;
    # the scan's own reader reports it as skipped
    return [grep, "-lEi", "--null", "--no-messages", "-D", "skip", "-e", PATTERN]


_ENV = {"LC_ALL": "C"}  # bytes, not characters: as Python's search reads them


def prefetch(root: str) -> None:
    """Start `grep -r` over a directory target now, while capgap itself loads (a core is idle).

    `prefetched(root)` collects it. grep -r, like the scan's own walk, follows no directory link
    and skips SKIP_DIRS; it skips file links too, which the caller therefore reads itself.
    """
    grep = grep_path()
    if grep is None or root in _STARTED or not os.path.isdir(root):
        return
    cmd = [*_command(grep), "-r", "--include=*.py", *(f"--exclude-dir={d}" for d in sorted(SKIP_DIRS))]
    try:
        _STARTED[root] = _Spawned([*cmd, "--", root], {**os.environ, **_ENV})
    except OSError:
        return


# Options of `capgap scan` that take a value (commands/scan.py; a test keeps the two in step):
# the word after one is its value, not a target.
SCAN_VALUE_OPTIONS = frozenset(
    ("--arch", "-a", "--python", "--format", "-f", "--fail-on", "--device", "--jobs", "-j")
    + ("--max", "--where", "--model")  # the report's filters
    + ("--config", "--select", "--ignore", "--baseline", "--write-baseline", "--against", "--store")
)


def prefetch_command_line(args: list[str]) -> None:
    """Start grep over every directory a `capgap scan` command line (`args`: after the verb)
    names, before typer and the rest of capgap load; the scan command collects them."""
    if "--help" in args or "-h" in args:
        return
    value_next = only_targets = False
    for arg in args:
        if value_next:
            value_next = False
        elif arg == "--" and not only_targets:
            only_targets = True
        elif arg.startswith("-") and not only_targets:
            value_next = arg in SCAN_VALUE_OPTIONS
        else:
            prefetch(os.path.realpath(os.path.expanduser(arg)))  # a link loop: no error here


class Stream:
    """The `.py` files (relative, posix) a running `grep -r` names, as it names them.

    Iterate once; afterwards `ok` says whether grep finished without an error (when it did not,
    the files it never named must be read by the caller: grep's silence proves nothing).
    """

    def __init__(self, proc: _Spawned, root: str) -> None:
        self._proc = proc
        self._prefix = root.rstrip(os.sep) + os.sep
        self.ok = False

    def __iter__(self) -> Iterator[str]:
        rest = b""
        while block := self._proc.stdout.read1(1 << 16):
            *names, rest = (rest + block).split(b"\0")
            yield from self._relative(names)
        yield from self._relative([rest] if rest else [])
        self.ok = self._proc.wait() in (0, 1)

    def _relative(self, names: list[bytes]) -> Iterator[str]:
        for raw in names:
            name = os.fsdecode(raw)
            if name.startswith(self._prefix):
                yield name[len(self._prefix) :].replace(os.sep, "/")


def started(root: str) -> bool:
    """Is a prefetch running for `root`?"""
    return root in _STARTED


def prefetched(root: str) -> Stream | None:
    """The prefetch started for `root`, to be read as it goes; None when none was started."""
    proc = _STARTED.pop(root, None)
    return Stream(proc, root) if proc is not None else None


def discard(root: str) -> None:
    """Stop a prefetch nobody needs (the cache answered)."""
    proc = _STARTED.pop(root, None)
    if proc is not None:
        proc.kill()


def discard_all() -> None:
    """Stop every prefetch still uncollected."""
    for root in list(_STARTED):
        discard(root)


def candidates(paths: list[str], workers: int) -> set[str] | None:
    """The paths holding any token (a superset of what the pre-filter passes); None: ask Python."""
    grep = grep_path()
    if not paths or grep is None:
        return None
    pending = batches(paths, workers)
    running: list[_Spawned] = []
    found: set[str] = set()
    try:
        while pending or running:
            while pending and len(running) < max(1, workers):
                running.append(_Spawned([*_command(grep), "--", *pending.pop()], {**os.environ, **_ENV}))
            proc = running.pop(0)
            out = proc.stdout.read()
            if proc.wait() not in (0, 1):  # 2: a file it could not read, or an option it lacks
                return None
            found.update(os.fsdecode(name) for name in out.split(b"\0") if name)
    except OSError:
        return None
    finally:
        for proc in running:
            proc.kill()
    return found


def batches(paths: list[str], workers: int) -> list[list[str]]:
    """`workers` equal shares of the paths, each cut where its arguments would grow too long."""
    shares = max(1, workers)
    per = -(-len(paths) // shares)
    out: list[list[str]] = []
    for i in range(0, len(paths), per):
        batch: list[str] = []
        size = 0
        for path in paths[i : i + per]:
            if batch and size + len(path) + 1 > _ARGS_BYTES:
                out.append(batch)
                batch, size = [], 0
            batch.append(path)
            size += len(path) + 1
        out.append(batch)
    return out
