"""Where capgap keeps its caches (overridable with CAPGAP_CACHE_DIR; tests always override it)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    env = os.environ.get("CAPGAP_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("capgap", appauthor=False))
