"""The `binaries` scan analyzer over a fixture tree: exact findings, skips, --no-binaries."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.binaries import analyzer
from capgap.binaries.compat import NO_IMAGE
from capgap.findings import Finding, Skipped
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target


def _host_only_library() -> Path | None:
    """A shared object of this Python's standard library: an ELF with no CUDA code."""
    libs = sorted(Path(sys.base_prefix).glob("lib/python3*/lib-dynload/*.so"))
    return libs[0] if libs else None


@pytest.fixture
def tree(tmp_path: Path, data_dir: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "lib").mkdir(parents=True)
    (root / "kernels").mkdir()
    for name in ("multi.so", "compressed.so", "ptx_only.so"):
        shutil.copy(data_dir / name, root / "lib" / name)
    (root / "lib" / "libmulti.so.1").symlink_to("multi.so")  # read once, not twice
    shutil.copy(data_dir / "sm120a.cubin", root / "kernels" / "sm120a.cubin")
    shutil.copy(data_dir / "ptx_af.fatbin", root / "kernels" / "ptx_af.fatbin")
    (root / "lib" / "libbroken.so").write_bytes((data_dir / "multi.so").read_bytes()[:3000])
    (root / "README.so.txt").write_text("not a binary at all\n")
    host = _host_only_library()
    if host is not None:
        shutil.copy(host, root / "lib" / "host_only.so")
    return root


def _missing(path: str, symbol: str, present: tuple[str, ...], cc: str, source: str) -> Finding:
    return Finding(
        rule="binary-missing-arch",
        severity="high",
        path=path,
        line=0,
        symbol=symbol,
        present=present,
        missing="sm_" + cc.replace(".", ""),
        consequence=NO_IMAGE,
        message=(
            f"{symbol} carries no SASS or PTX a {cc} GPU can run; launching its kernels "
            "fails with cudaErrorNoKernelImageForDevice"
        ),
        arch=cc,
        source=source,
    )


def _rated(severity: str, says: Callable[[str, str], str]) -> Callable[..., Finding]:
    """A maker like _missing whose finding has another severity and message (symbol, cc -> text)."""

    def make(path: str, symbol: str, present: tuple[str, ...], cc: str, source: str) -> Finding:
        found = _missing(path, symbol, present, cc, source)
        return dataclasses.replace(found, severity=severity, message=says(symbol, cc))

    return make


# only other GPUs' arch-specific images (sm_103a, compute_90a, compute_100f): expected, low
_by_design = _rated(
    "low",
    lambda symbol, cc: (
        f"expected: {symbol} is built only for compute_90a, compute_100f, sm_103a, arch-specific "
        f"targets for wgmma and tcgen05, which {cc} lacks; it has no {cc} image by design "
        f"(the engine must not send {cc} to it)"
    ),
)
# other libraries of the tree carry SASS for cc (multi.so, compressed.so): medium
_left_out = _rated(
    "medium",
    lambda symbol, cc: (
        f"{symbol} carries no SASS or PTX a {cc} GPU can run, while other libraries of the same "
        f"target carry {cc} SASS: it was left out of the {cc} build, so its kernels fail with "
        f"cudaErrorNoKernelImageForDevice if the engine sends {cc} to them"
    ),
)


PTX_AF = ("kernels/ptx_af.fatbin", "ptx_af.fatbin", ("sm_103a", "compute_90a", "compute_100f"))
SM120A = ("kernels/sm120a.cubin", "sm120a.cubin", ("sm_120a",))


@pytest.mark.parametrize(
    ("arch", "expected"),
    [
        ("12.0", [(_by_design, *PTX_AF, "12.0", "SASS: sm_103a | PTX: compute_90a compute_100f")]),
        # sm_120a explains nothing 9.0 or 10.3 lacks (it has no wgmma or tcgen05): a real gap, but
        # multi.so beside it carries SASS for them, so the build knew them: medium
        ("sm_90a", [(_left_out, *SM120A, "9.0", "SASS: sm_120a | PTX: none")]),
        ("10.3", [(_left_out, *SM120A, "10.3", "SASS: sm_120a | PTX: none")]),
        (
            "12.1",
            [
                (_by_design, *PTX_AF, "12.1", "SASS: sm_103a | PTX: compute_90a compute_100f"),
                # 12.0's own family built exactly for 12.0: 12.1 could have had it (sm_120f)
                (_left_out, *SM120A, "12.1", "SASS: sm_120a | PTX: none"),
            ],
        ),
    ],
)
def test_findings_per_arch(tree: Path, arch: str, expected: list[tuple]) -> None:
    result = analyzer.analyze(resolve_target(str(tree)), ScanOptions(archs=(parse_arch(arch),)))
    assert sorted(result.findings, key=lambda f: f.path) == [make(*e) for make, *e in expected]
    assert [s.path for s in result.skipped] == ["lib/libbroken.so"]
    assert isinstance(result.skipped[0], Skipped)
    # multi, compressed, ptx_only, the cubin and the fatbin, plus host_only when this Python has one
    assert result.files == 5 + (_host_only_library() is not None)


def test_several_archs_give_one_finding_each(tree: Path) -> None:
    options = ScanOptions(archs=(parse_arch("9.0"), parse_arch("12.0"), parse_arch("sm_90a")))
    result = analyzer.analyze(resolve_target(str(tree)), options)
    assert sorted((f.symbol, f.arch) for f in result.findings) == [
        ("ptx_af.fatbin", "12.0"),
        ("sm120a.cubin", "9.0"),
    ]


def test_no_binaries_option_skips_the_analyzer(tree: Path) -> None:
    result = analyzer.analyze(
        resolve_target(str(tree)), ScanOptions(archs=(parse_arch("12.0"),), binaries=False)
    )
    assert (result.findings, result.skipped, result.files) == ([], [], 0)


def test_libraries_without_cuda_code_produce_nothing(tmp_path: Path) -> None:
    host = _host_only_library()
    if host is None:
        pytest.skip(f"no lib-dynload shared objects in {sys.prefix}")
    shutil.copy(host, tmp_path / "libplain.so")
    result = analyzer.analyze(resolve_target(str(tmp_path)), ScanOptions(archs=(parse_arch("12.0"),)))
    assert (result.findings, result.skipped, result.files) == ([], [], 1)


def test_analyzer_is_registered() -> None:
    from capgap.scan.analyzers import load_analyzers

    assert analyzer.ANALYZER_ID == "binaries"
    assert analyzer in load_analyzers()


def test_rescans_come_from_the_cache_until_a_file_changes(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from capgap.binaries import audit

    options = ScanOptions(archs=(parse_arch("12.1"),))
    first = analyzer.analyze(resolve_target(str(tree)), options)
    real_read = audit.read_binary
    calls: list[str] = []

    def counting_read(path: Path):  # noqa: ANN202
        calls.append(path.name)
        return real_read(path)

    monkeypatch.setattr(audit, "read_binary", counting_read)
    second = analyzer.analyze(resolve_target(str(tree)), options)
    assert calls == []  # everything, the unreadable file included, came from the cache
    assert (second.findings, second.skipped, second.files) == (first.findings, first.skipped, first.files)

    cubin = tree / "kernels" / "sm120a.cubin"
    st = cubin.stat()
    os.utime(cubin, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = analyzer.analyze(resolve_target(str(tree)), options)
    assert calls == ["sm120a.cubin"]
    assert third.findings == first.findings

    uncached = analyzer.analyze(resolve_target(str(tree)), ScanOptions(archs=options.archs, use_cache=False))
    assert uncached.findings == first.findings
    expected = ["README.so.txt", "compressed.so", "libbroken.so", "multi.so", "ptx_af.fatbin", "ptx_only.so"]
    expected += ["sm120a.cubin"] + (["host_only.so"] if _host_only_library() else [])
    assert sorted(calls[1:]) == sorted(expected)  # the symlink libmulti.so.1 is read once, as multi.so


@pytest.mark.parametrize(
    ("name", "severity"),
    [
        # one library per CUDA toolkit (bitsandbytes' `_cuda118` ... `_cuda132`): CUDA 11.7 cannot
        # target sm_90 (11.8 is the first), so a 9.0 GPU loads a newer build; only the name is read
        ("libkernels_cuda117.so", "low"),
        ("libkernels_cuda118.so", "medium"),  # a toolkit that could have built sm_90
        ("libkernels.so", "medium"),  # no toolkit named
    ],
)
def test_a_library_named_for_a_toolkit_too_old_for_the_arch_is_expected(
    tree: Path, name: str, severity: str
) -> None:
    (tree / "kernels" / "sm120a.cubin").rename(tree / "kernels" / name)
    result = analyzer.analyze(resolve_target(str(tree)), ScanOptions(archs=(parse_arch("9.0"),)))
    (found,) = [f for f in result.findings if f.symbol == name]
    assert found.severity == severity
    if severity == "low":
        assert found.message.startswith(
            f"expected: {name} was built with CUDA 11.7, which cannot target sm_90; CUDA 11.8 is the "
            "first toolkit that can; other libraries of the same target carry 9.0 SASS"
        )
        assert found.extra["evidence"] == (
            "its name: built with CUDA 11.7, which cannot target sm_90; "
            "CUDA 11.8 is the first toolkit that can"
        )
