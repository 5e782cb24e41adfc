"""Fixture builders for the patch tests: real git repositories and real wheels."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import zipfile
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "pull.rebase=false", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=check,
    )


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def tree_sums(root: Path, skip: tuple[str, ...] = (".git",)) -> dict[str, str]:
    """sha256 of every file under root (the proof that nothing was lost)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not set(p.relative_to(root).parts) & set(skip)
    }


def build_wheel(dest: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A real pure-Python wheel (METADATA, WHEEL, RECORD with sha256) built by hand."""
    info = f"{name}-{version}.dist-info"
    members = dict(files)
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    members[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: capgap-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = []
    for rel, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = "\n".join(record) + "\n"
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel, text in members.items():
            zf.writestr(rel, text)
    return wheel
