"""Which directories' new files belong to an installed dist (namespace packages are shared)."""

from __future__ import annotations

from capgap.patches.detect import _own_dirs


def test_namespace_dirs_shared_with_other_dists_are_not_walked_whole() -> None:
    record = {
        "nvidia/cublas/__init__.py": "x",
        "nvidia/cublas/lib/libcublas.so.13": "x",
        "nvidia/cublas/include/cublas.h": "x",
        "toy/__init__.py": "x",
        "toy/sub/tables.py": "x",
        "toy_data/blob.bin": "x",
        "single_module.py": "x",
    }
    assert _own_dirs(record) == ({"nvidia/cublas", "toy"}, {"toy_data"})
