"""Output into a real pipe (issue 15, item 9): capgap runs as its own process with stdout a
pipe, as in `capgap patch show NAME > fix.diff` or `capgap upgrade ... | less`; nothing may be
wrapped at 80 columns or cut: a diff is the diff (`git apply --check` takes it), table cells and
paths are whole, one row a line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.patches.helpers import commit_all, git, write

# deeper than 80 columns, like sglang/srt/distributed/device_communicators/...
REL = "engine/srt/distributed/device_communicators/symmetric_memory_all_reduce_settings_for_gpus.py"
TEXT = "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {\n    9: {2: 64 * 1024 * 1024},\n}\n"
EDITED = TEXT.replace(
    "\n}\n", "\n    12: {2: 64 * 1024 * 1024},  # for the RTX PRO 6000 Blackwell Server Edition boards\n}\n"
)


def _capgap(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}  # what a pipe gets anyway; a wide terminal must not matter
    return subprocess.run(
        [sys.executable, "-m", "capgap", *args],
        capture_output=True,  # stdout a real pipe, as `capgap ... | cat` has it
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def _repos(tmp_path: Path) -> tuple[Path, Path]:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {REL: TEXT, "engine/__init__.py": ""})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    return upstream, tmp_path / "work"


def test_patch_show_into_a_pipe_is_the_diff(tmp_path: Path) -> None:
    _, work = _repos(tmp_path)
    (work / REL).write_text(EDITED)
    store = str(tmp_path / "store")
    assert _capgap("patch", "save", "sm120", str(work), "--store", store).returncode == 0
    shown = _capgap("patch", "show", "sm120", "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (Path(store) / "sm120" / "patch.diff").read_text()
    assert "sm120: git work" in shown.stderr  # the header goes apart from the diff
    git(work, "checkout", "--", ".")
    (tmp_path / "fix.diff").write_text(shown.stdout)
    check = git(work, "apply", "--check", str(tmp_path / "fix.diff"), check=False)
    assert check.returncode == 0, check.stderr
    assert max(len(line) for line in shown.stdout.splitlines()) > 80  # the case that was cut


def test_upgrade_table_into_a_pipe_has_whole_paths(tmp_path: Path) -> None:
    upstream, work = _repos(tmp_path)
    (work / REL).write_text(EDITED)
    write(upstream, {"README": "v2\n"})
    commit_all(upstream, "v2")
    res = _capgap("upgrade", str(work), "--store", str(tmp_path / "store"), "--", "git", "pull", "-q")
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if REL in line]
    assert len(rows) == 1 and "applied" in rows[0], res.stdout  # one row, one line, the whole path
    assert "…" not in res.stdout and "..." not in res.stdout
    widths = {len(line) for line in res.stdout.splitlines() if line.startswith(("┏", "┃", "│", "└"))}
    assert max(widths) > 80


def test_a_fact_table_into_a_pipe_is_not_wrapped() -> None:
    res = _capgap("arch", "sm_120a")
    assert res.returncode == 0, res.stderr
    products = next(line for line in res.stdout.splitlines() if line.startswith("│ products"))
    assert "RTX PRO 6000 Blackwell Server Edition" in products and "GeForce RTX 5080" in products


def test_upgrade_shows_the_commands_output_live_and_marks_its_own_lines(tmp_path: Path) -> None:
    """The command prints a line, then waits for a file the test makes only after it read that
    line from capgap's stderr: the output came while the command ran, not at its end."""
    _, work = _repos(tmp_path)
    go = tmp_path / "go"
    script = f"echo pulling now; while [ ! -e {go} ]; do sleep 0.05; done; echo pulled >&2"
    cmd = [sys.executable, "-m", "capgap", "upgrade", str(work), "--store", str(tmp_path / "store")]
    proc = subprocess.Popen(
        [*cmd, "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line == "pulling now\n":
            go.touch()
            break
    out, rest = proc.communicate(timeout=60)
    lines = seen + rest.splitlines(keepends=True)
    assert proc.returncode == 0, "".join(lines)
    assert lines[0].startswith("capgap: running sh -c ")
    assert lines[1:3] == ["pulling now\n", "pulled\n"]
    assert lines[3].startswith("capgap: sh -c ") and " exited with 0 after " in lines[3]
    assert "pulling now" not in out  # stdout: capgap's report only
