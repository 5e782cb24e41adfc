"""Which file names may hold CUDA kernels (apart from the reader: a scan asks this of every file
before it knows whether there is any binary to read at all)."""

from __future__ import annotations


def is_candidate_name(name: str) -> bool:
    """*.so, *.so.N..., *.cubin, *.fatbin."""
    return name.endswith((".so", ".cubin", ".fatbin")) or ".so." in name
