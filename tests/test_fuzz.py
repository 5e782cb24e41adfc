"""Issue 16: a fuzz run of at least 500 hostile inputs (fixed seed) over the scan, the binaries
reader and the patch store (tests/fuzz_hostile.py). It runs in a child process under an
address-space limit, with every directory capgap writes to inside its temp dir, and must end
with no traceback, no hang (an alarm per input), bounded memory and nothing written outside."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = 16
ADDRESS_SPACE = 4 << 30  # RLIMIT_AS of the child: a read of /dev/zero or a 4 GB fold dies here
MAX_RSS = 1 << 30  # what the child may have held at its peak


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return out


def test_hostile_inputs_give_no_traceback_hang_or_write_outside(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    for d in (work / "home", work / "cache", work / "tmp", outside / "sub"):
        d.mkdir(parents=True)
    (outside / "secret.py").write_text('ARCH_TILES = {"9.0": 1}\n')
    (outside / "sub" / "keep.txt").write_text("mine\n")
    before = _snapshot(outside)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAPGAP_", "XDG_", "PYTHON"))}
    env.update(
        HOME=str(work / "home"),
        CAPGAP_CACHE_DIR=str(work / "cache"),
        TMPDIR=str(work / "tmp"),
        XDG_CACHE_HOME=str(work / "cache"),
        PYTHONPATH=str(REPO),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tests.fuzz_hostile", str(work), str(outside), str(SEED)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_limit,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"fuzz: {report['inputs']} hostile inputs, {report['calls']} calls, {report['seconds']} s, "
        f"peak {report['max_rss_kib'] // 1024} MiB"
    )
    assert report["failures"] == [], json.dumps(report["failures"][:3], indent=1)
    inputs = report["inputs"]
    assert sum(inputs.values()) >= 500 and all(n >= 100 for n in inputs.values()), inputs
    assert report["max_rss_kib"] * 1024 < MAX_RSS, report["max_rss_kib"]
    assert _snapshot(outside) == before
