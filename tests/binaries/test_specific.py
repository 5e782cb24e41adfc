"""A library built only as other GPUs' arch-specific code has no image by design: a low finding.

Synthetic fatbins give each branch; the real nvcc-built ptx_af.fatbin (compute_90a, compute_100f,
sm_103a) goes through the whole analyzer in test_analyzer.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.binaries.audit import audit_files, findings, served
from capgap.binaries.fatbin import FLAG_ARCH_SPECIFIC, FLAG_FAMILY
from capgap.binaries.reader import read_binary
from capgap.binaries.specific import ArchSpecific, arch_specific_only
from tests.binaries.fatbin_bytes import container, entry

SASS, PTX = 2, 1
A, F, PLAIN = FLAG_ARCH_SPECIFIC | 0x11, FLAG_FAMILY | 0x11, 0x11
# a module with a kernel in it (an empty one can never fail a launch and is not judged)
_BODY = {SASS: b"\1" * 32, PTX: b".visible .entry k()\n{\n\tret;\n}\n\0\0\0"}


def _library(path: Path, *images: tuple[int, int, int]) -> Path:
    path.write_bytes(
        container(*(entry(kind, sm, flags=flags, payload=_BODY[kind]) for kind, sm, flags in images))
    )
    return path


def _fatbin(tmp_path: Path, *images: tuple[int, int, int]) -> Path:
    return _library(tmp_path / "lib.fatbin", *images)


@pytest.mark.parametrize(
    ("images", "cc", "expected"),
    [
        # FlashAttention-3: Hopper's wgmma kernels only
        ([(SASS, 90, A)], (12, 0), ArchSpecific(("sm_90a",), ("wgmma",))),
        # FlashMLA: sm_90a and sm_100f, each explained by a feature 12.0 lacks
        ([(SASS, 90, A), (SASS, 100, F)], (12, 0), ArchSpecific(("sm_90a", "sm_100f"), ("wgmma", "tcgen05"))),
        ([(SASS, 100, F)], (9, 0), ArchSpecific(("sm_100f",), ("tcgen05",))),
        ([(PTX, 90, A)], (8, 9), ArchSpecific(("compute_90a",), ("wgmma",))),
        # one portable image: the library could have been built for 12.0 too
        ([(SASS, 80, PLAIN), (SASS, 90, A)], (12, 0), None),
        ([(SASS, 90, A), (PTX, 90, PLAIN)], (12, 0), None),
        # an sm_120f port beside them: the kernel is not bound to wgmma or tcgen05
        ([(SASS, 90, A), (SASS, 100, F), (SASS, 120, F)], (8, 9), None),
        # its own family's exact build: 12.1 could have had sm_121a or sm_120f
        ([(SASS, 120, A)], (12, 1), None),
        # sm_120a has nothing 9.0 lacks: no evidence that 9.0 was left out by design
        ([(SASS, 120, A)], (9, 0), None),
    ],
)
def test_arch_specific_only(
    tmp_path: Path, images: list[tuple[int, int, int]], cc: tuple[int, int], expected: ArchSpecific | None
) -> None:
    binary = read_binary(_fatbin(tmp_path, *images))
    assert binary is not None
    assert arch_specific_only(binary, *cc) == expected


def test_the_finding_is_low_and_names_its_evidence(tmp_path: Path) -> None:
    _fatbin(tmp_path, (SASS, 90, A), (SASS, 100, F))
    audit = audit_files([tmp_path / "lib.fatbin"], tmp_path, [(12, 0), (9, 0)])
    (lib,) = audit.libraries
    (found,) = findings(lib)  # 9.0 runs the sm_90a image
    assert (found.severity, found.arch, found.missing) == ("low", "12.0", "sm_120")
    assert found.extra["evidence"] == "images: sm_90a, sm_100f (arch-specific targets only)"
    assert found.message.startswith("expected: lib.fatbin is built only for sm_90a, sm_100f")
    assert "wgmma and tcgen05, which 12.0 lacks" in found.message


def test_a_portable_image_keeps_the_finding_high(tmp_path: Path) -> None:
    _fatbin(tmp_path, (SASS, 80, PLAIN), (SASS, 90, A))
    audit = audit_files([tmp_path / "lib.fatbin"], tmp_path, [(12, 0)])
    (found,) = findings(audit.libraries[0])
    assert found.severity == "high"
    assert "evidence" not in found.extra


def test_a_library_left_out_of_a_build_that_knew_the_gpu_is_medium(tmp_path: Path) -> None:
    main = _library(tmp_path / "common_ops.fatbin", (SASS, 90, PLAIN), (SASS, 120, A))
    fa3 = _library(tmp_path / "flash_ops.fatbin", (SASS, 80, PLAIN), (SASS, 90, A))
    audit = audit_files([main, fa3], tmp_path, [(12, 0), (12, 1)])
    found = {(f.symbol, f.arch): f for lib in audit.libraries for f in findings(lib, served(audit))}
    # common_ops carries sm_120a: the build knew 12.0 and left flash_ops out of it
    assert found["flash_ops.fatbin", "12.0"].severity == "medium"
    assert "other libraries of the same target carry 12.0 SASS" in found["flash_ops.fatbin", "12.0"].message
    # nothing here runs natively on 12.1 (sm_120a is 12.0's alone): the whole build misses it
    assert found["flash_ops.fatbin", "12.1"].severity == "high"
    assert found["common_ops.fatbin", "12.1"].severity == "high"


def test_a_sibling_that_only_ptx_serves_says_nothing_of_the_build(tmp_path: Path) -> None:
    comm = _library(tmp_path / "comm.fatbin", (SASS, 80, PLAIN), (PTX, 90, PLAIN))
    ops = _library(tmp_path / "ops.fatbin", (SASS, 80, PLAIN), (SASS, 90, PLAIN))
    audit = audit_files([comm, ops], tmp_path, [(12, 0)])
    (found,) = [f for lib in audit.libraries for f in findings(lib, served(audit))]
    assert (found.symbol, found.severity) == ("ops.fatbin", "high")


def test_an_example_library_is_placed_and_low(tmp_path: Path) -> None:
    # fbgemm-gpu-genai 1.9.0 ships `experimental/example/..._example_py.so`, a CUTLASS demo only its
    # example package loads, beside the gen_ai library every `import fbgemm_gpu` loads
    (tmp_path / "experimental" / "example").mkdir(parents=True)
    demo = _library(tmp_path / "experimental" / "example" / "demo.fatbin", (SASS, 80, PLAIN))
    ops = _library(tmp_path / "gen_ai.fatbin", (SASS, 80, PLAIN))
    audit = audit_files([demo, ops], tmp_path, [(12, 0)])
    found = {f.symbol: f for lib in audit.libraries for f in findings(lib, served(audit))}
    assert (found["demo.fatbin"].severity, found["demo.fatbin"].extra["where"]) == ("low", "example")
    assert (found["gen_ai.fatbin"].severity, found["gen_ai.fatbin"].extra["where"]) == ("high", "runtime")
