"""Real source distributions for integration tests: downloaded once into the persistent test cache.

`pip download` of an sdist builds its metadata (for vLLM: torch and a CUDA toolchain), so the file
is fetched the way pip finds it: the index's JSON simple page (PEP 691) names it with its sha256,
which is checked. One lock per file; skipped with the reason when the index can't be reached.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tarfile
import urllib.request
from pathlib import Path

import pytest

INDEX = os.environ.get("CAPGAP_TEST_INDEX", "https://pypi.org/simple")


def fetch_sdist(cache: Path, name: str, version: str, members: tuple[str, ...]) -> Path:
    """The sdist's `members` (top-level paths inside it, e.g. "csrc", "CMakeLists.txt"), unpacked
    under the cache; the directory returned holds them."""
    dest = cache / f"{name}-{version}-sdist"
    dest.mkdir(parents=True, exist_ok=True)
    done = dest / ".unpacked"
    with (dest / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return dest / "tree"
        try:
            archive = _download(dest, name, version)
        except (OSError, ValueError, KeyError) as exc:
            pytest.skip(f"cannot download the {name}=={version} sdist (index unreachable?): {exc}")
        with tarfile.open(archive) as tar:
            top = f"{name}-{version}/"
            wanted = [m for m in tar.getmembers() if m.name.startswith(tuple(top + p for p in members))]
            for m in wanted:
                m.name = "tree/" + m.name[len(top) :]
            tar.extractall(dest, members=wanted, filter="data")
        archive.unlink()
        done.touch()
        return dest / "tree"


def _download(dest: Path, name: str, version: str) -> Path:
    req = urllib.request.Request(
        f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - the package index
        page = json.load(resp)
    filename = f"{name}-{version}.tar.gz"
    entry = next(f for f in page["files"] if f["filename"] == filename)
    path = dest / filename
    digest = hashlib.sha256()
    with urllib.request.urlopen(entry["url"], timeout=600) as resp, path.open("wb") as out:  # noqa: S310
        while chunk := resp.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != entry["hashes"]["sha256"]:
        path.unlink()
        raise ValueError(f"{filename}: sha256 does not match the index's")
    return path
