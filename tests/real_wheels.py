"""Real wheels for integration tests: downloaded once into the persistent test cache.

One lock per requirement, so parallel pytest workers download it once; a per-process temporary
directory renamed into place, so nobody sees a half-written wheel. When the index can't be
reached the calling test is skipped with pip's reason.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest


def fetch_wheel(cache: Path, requirement: str, pip_args: Sequence[str] = ()) -> Path:
    dest = cache / requirement.replace("==", "-")
    dest.mkdir(parents=True, exist_ok=True)
    with (dest / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = sorted(dest.glob("*.whl"))
        if found:
            return found[0]
        tmp = dest / f"tmp-{os.getpid()}"
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
        try:
            proc = subprocess.run(
                [*cmd, "-d", str(tmp), *pip_args, requirement],
                capture_output=True, text=True, check=False, timeout=1200,
            )
            reason = (proc.stderr.strip().splitlines() or ["no wheel"])[-1] if proc.returncode else "no wheel"
        except subprocess.TimeoutExpired:
            reason = "pip download timed out"
        got = sorted(tmp.glob("*.whl"))
        if not got:
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.skip(f"cannot download {requirement} (index unreachable?): {reason}")
        os.replace(got[0], dest / got[0].name)
        shutil.rmtree(tmp, ignore_errors=True)
        return dest / got[0].name
