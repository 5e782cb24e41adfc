"""A path that imports one of the tree's compiled modules needs what that module's images were built
for (vLLM's DCP top-k merge: `import vllm._deepselect_C` after a family-100 gate, and
`_deepselect_C.abi3.so` holds only `sm_100f` kernels): the exclusion is expected, low, and says so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capgap.binaries.fatbin import FLAG_ARCH_SPECIFIC
from capgap.judging.extensions import module_of
from tests.binaries.conftest import DATA
from tests.binaries.fatbin_bytes import container, entry

from .test_decisions import _scan

_MERGE = """
from eng.merge_kernels import merge_rows
from eng.platforms import current_platform


def merge_local_topk(world_size, topk):
    if world_size <= 1 or not current_platform.is_device_capability_family(100):
        return 0
    try:
        import eng._select_C  # noqa: F401
    except ImportError:
        return 0
    return merge_rows(topk, world_size)
"""


@pytest.mark.parametrize(
    ("rel", "module"),
    [
        ("vllm/_deepselect_C.abi3.so", "vllm._deepselect_C"),
        ("a/b/_C.cpython-311-x86_64-linux-gnu.so", "a.b._C"),
        ("ext.so", "ext"),
        ("lib/libcudart.so.12", ""),  # a shared library, not a module Python imports
        ("a/x.y.so", ""),
    ],
)
def test_the_module_an_extension_file_imports_as(rel: str, module: str) -> None:
    assert module_of(rel) == module


def _tree(tmp_path: Path, library: bytes | None) -> Path:
    (tmp_path / "eng").mkdir(parents=True, exist_ok=True)
    if library is not None:
        (tmp_path / "eng" / "_select_C.abi3.so").write_bytes(library)
    return tmp_path


def test_a_path_importing_a_library_built_only_for_sm100_and_sm90_is_expected(tmp_path: Path) -> None:
    # ptx_af.fatbin is nvcc's: compute_90a, compute_100f and sm_103a images, nothing portable
    library = (DATA / "ptx_af.fatbin").read_bytes()
    found = _scan(_tree(tmp_path, library), {"eng/merge.py": _MERGE})
    (gate,) = [f for f in found if f.rule == "gate-excludes-arch"]
    assert gate.severity == "low"
    assert "eng._select_C's compiled kernels, built only for" in gate.extra["evidence"]
    assert "tcgen05" in gate.consequence


def test_a_library_with_a_portable_image_is_no_evidence(tmp_path: Path) -> None:
    images = (
        entry(2, 80, flags=0x11, payload=b"\1" * 32),
        entry(2, 100, flags=FLAG_ARCH_SPECIFIC | 0x11, payload=b"\1" * 32),
    )
    found = _scan(_tree(tmp_path, container(*images)), {"eng/merge.py": _MERGE})
    assert [f.severity for f in found if f.rule == "gate-excludes-arch"] == ["medium"]


def test_a_library_reached_only_through_another_function_says_nothing_of_the_path(tmp_path: Path) -> None:
    # the file's own resolver imports the library down another of its branches
    text = """
    from eng.platforms import current_platform
    from eng.topk_kernels import persistent_topk


    def resolve(backend):
        if backend == "select":
            import eng._select_C  # noqa: F401
            return "select"
        return "persistent"


    def takes_bf16(backend):
        if current_platform.is_device_capability_family(100) and resolve(backend) == "persistent":
            return persistent_topk(backend)
        return None
    """
    tree = _tree(tmp_path, (DATA / "ptx_af.fatbin").read_bytes())
    found = [f for f in _scan(tree, {"eng/topk.py": text}) if f.rule == "gate-excludes-arch"]
    assert [f.severity for f in found] == ["medium"]


def test_no_library_file_no_evidence(tmp_path: Path) -> None:
    shutil.rmtree(tmp_path / "eng", ignore_errors=True)
    found = _scan(_tree(tmp_path, None), {"eng/merge.py": _MERGE})
    assert [f.severity for f in found if f.rule == "gate-excludes-arch"] == ["medium"]
