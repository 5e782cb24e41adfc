"""Distributions for the tests that install, scan or patch one without downloading it: a
pure-Python wheel built by hand (PEP 427: METADATA, WHEEL, RECORD with sha256), and a bare venv
to install it into."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path


def build_wheel(dest: Path, name: str, version: str, files: Mapping[str, str | bytes]) -> Path:
    """`dest/NAME-VERSION-py3-none-any.whl` holding `files`; RECORD written with csv quoting,
    as pip writes it (config file names hold commas)."""
    info = f"{name}-{version}.dist-info"
    members = {rel: data.encode() if isinstance(data, str) else data for rel, data in files.items()}
    members[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n".encode()
    )
    members[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: capgap-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for rel, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([rel, f"sha256={digest}", len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    members[f"{info}/RECORD"] = record.getvalue().encode()
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel, data in members.items():
            zf.writestr(rel, data)
    return wheel


def make_venv(path: Path) -> tuple[str, Path]:
    """A fresh venv without pip at `path` (pip installs into it with `--python`): its
    interpreter and its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = str(path / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return python, Path(site)
