"""Build config trees for the tests: device-named JSON files with chosen tile sizes."""

from __future__ import annotations

import json
from pathlib import Path


def entry(m: int, n: int, k: int, stages: int | None = 3, warps: int = 4) -> dict[str, int]:
    out = {"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 1, "num_warps": warps}
    if stages is not None:
        out["num_stages"] = stages
    return out


def write_config(directory: Path, name: str, tiles: dict[str, dict[str, int]] | None = None) -> Path:
    """Write `name` in `directory` with batch-size -> config entries (a small default)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(json.dumps(tiles or {"1": entry(16, 32, 64, 2)}, indent=2))
    return path


def build_wheel(dest: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel built by hand; RECORD written with csv quoting, as pip writes it
    (config file names hold commas)."""
    import base64
    import csv
    import hashlib
    import io
    import zipfile

    info = f"{name}-{version}.dist-info"
    members = dict(files)
    members[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    members[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: capgap-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for rel, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        writer.writerow([rel, f"sha256={digest}", len(text.encode())])
    writer.writerow([f"{info}/RECORD", "", ""])
    members[f"{info}/RECORD"] = record.getvalue()
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel, text in members.items():
            zf.writestr(rel, text)
    return wheel
