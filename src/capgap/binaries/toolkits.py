"""The CUDA toolkit a library's name says it was built with (`libbitsandbytes_cuda118.so`), and
whether that toolkit could compile for an arch at all.

Packages that ship one library per CUDA toolkit (bitsandbytes: `libbitsandbytes_cuda118.so` ...
`_cuda132.so`) load the one matching the CUDA runtime. A library built with a toolkit older than
the first that knows an arch has no image for it by necessity: a GPU of that arch runs a newer
toolkit, and the newer build of the same library.
"""

from __future__ import annotations

import re

# The first CUDA toolkit whose nvcc targets each arch (CUDA Toolkit release notes: 11.0 added
# sm_80, 11.1 sm_86, 11.4 sm_87, 11.8 sm_89 and sm_90, 12.8 sm_100, sm_101 and sm_120, 12.9 sm_103
# and sm_121, 13.0 sm_110, Thor's sm_101 renamed).
FIRST_TOOLKIT: dict[str, tuple[int, int]] = {
    "8.0": (11, 0),
    "8.6": (11, 1),
    "8.7": (11, 4),
    "8.9": (11, 8),
    "9.0": (11, 8),
    "10.0": (12, 8),
    "10.1": (12, 8),
    "12.0": (12, 8),
    "10.3": (12, 9),
    "12.1": (12, 9),
    "11.0": (13, 0),
}

# `_cuda118`, `-cu121`, `_cuda12.6`: a toolkit version in a library's file name (a word of its own)
_NAMED = re.compile(r"(?<![a-z0-9])cu(?:da)?(\d{2})\.?(\d)(?![0-9])", re.I)


def named_toolkit(name: str) -> tuple[int, int] | None:
    """The CUDA toolkit a library's file name names (`libbitsandbytes_cuda118.so` -> (11, 8))."""
    found = _NAMED.search(name)
    return (int(found[1]), int(found[2])) if found else None


def too_old_for(name: str, cc: str) -> str:
    """Why the library named `name` cannot hold `cc` code ("CUDA 11.8, which cannot target sm_120;
    CUDA 12.8 is the first that can"), or "" when its name names no toolkit or one that can."""
    built, first = named_toolkit(name), FIRST_TOOLKIT.get(cc)
    if built is None or first is None or built >= first:
        return ""
    sm = "sm_" + cc.replace(".", "")
    return (
        f"CUDA {built[0]}.{built[1]}, which cannot target {sm}; CUDA {first[0]}.{first[1]} is the "
        f"first toolkit that can"
    )
