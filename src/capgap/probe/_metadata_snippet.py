"""Read installed distributions' metadata from the directories given (capgap's own path, or the
site directories of another environment: see interpreters.py). Standard library only.

It never imports the packages it lists; it reads their dist-info and, on request, a few of their
plain files (e.g. torch/version.py) as text.
"""

import json
import os
import re
import sys
from importlib import metadata

_MAX_FILE_BYTES = 1 << 20


def collect(request, paths=None):
    """request: {"files": {dist_name: [relative paths]}}; paths: directories to search (default sys.path)."""
    if paths is None:
        cwd = os.getcwd()
        paths = [p for p in sys.path if p not in ("", cwd)]  # not what happens to be in the cwd
    wanted = {_norm(k): v for k, v in request.get("files", {}).items()}
    seen = set()
    dists = []
    files = {}
    for dist in metadata.distributions(path=list(paths)):
        name = dist.metadata["Name"]
        if not name or _norm(name) in seen:
            continue  # the first one on the path is the one that imports
        seen.add(_norm(name))
        direct_url = dist.read_text("direct_url.json")
        dists.append(
            {
                "name": name,
                "version": dist.version,
                "location": str(dist.locate_file("")),
                "direct_url": json.loads(direct_url) if direct_url else None,
            }
        )
        for rel in wanted.get(_norm(name), []):
            files[rel] = _read(dist.locate_file(rel))
    return {
        "python": sys.executable,
        "python_version": ".".join(str(n) for n in sys.version_info[:3]),
        "dists": dists,
        "files": files,
    }


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def _read(path):
    try:
        with open(str(path), "rb") as fh:
            return fh.read(_MAX_FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


if __name__ == "__main__":
    json.dump(collect(json.loads(sys.argv[1])), sys.stdout)
