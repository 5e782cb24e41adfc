"""What a pinned release's modules say a path needs (scan/dependencies.py, judging.callees).

An engine's `_supports_current_device` asks `major == 10 and has_grouped_gemm()`, and the
predicate hands `"kernlib.blockscaled.grouped_gemm"` to importlib: the kernel is the release's,
and only the release says it needs tcgen05. Fixture releases sit in capgap's cache as
`capgap scan kernlib==2.0` would have unpacked them; one test reads a real FlashInfer release.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.paths import cache_dir
from capgap.scan.analyzers import ScanOptions
from capgap.scan.dependencies import pins
from capgap.scan.run import run_scan
from capgap.targets import unpack_wheel
from tests.real_wheels import fetch_wheel

_METADATA = """\
Metadata-Version: 2.1
Name: eng
Version: 1.0
Requires-Dist: torch>=2.9
Requires-Dist: kernlib-python[cu13]==2.0
Requires-Dist: testonly==1.0; extra == "test"
"""

_ENGINE = {
    "eng/__init__.py": "",
    "eng/utils.py": """
        import importlib

        import torch


        def is_sm100_supported():
            return torch.cuda.get_device_capability() == (10, 0)


        def _get_submodule(name):
            try:
                return importlib.import_module(name)
            except ImportError:
                return None


        def has_grouped_gemm():
            mod = _get_submodule("kernlib.blockscaled")
            return mod is not None and hasattr(mod, "grouped_gemm")


        def has_fused_moe():
            mod = _get_submodule("kernlib")
            return mod is not None and hasattr(mod, "fused_moe")
    """,
    "eng/experts.py": """
        import torch

        from eng.utils import has_fused_moe, has_grouped_gemm


        def grouped_supported():
            return torch.cuda.get_device_capability()[0] == 10 and has_grouped_gemm()


        def fused_supported():
            return torch.cuda.get_device_capability()[0] == 10 and has_fused_moe()
    """,
}

# The release: a package re-exporting its functions, a wrapper driving a tcgen05 kernel module of
# its own, and a function whose own decorator admits 10.x alone
_RELEASE = {
    "kernlib/__init__.py": "from .moe import fused_moe as fused_moe\n",
    "kernlib/blockscaled.py": """
        from kernlib.kernels.masked_blackwell import MaskedGemmKernel


        def grouped_gemm(a, b):
            return MaskedGemmKernel()(a, b)
    """,
    "kernlib/kernels/__init__.py": "",
    "kernlib/kernels/masked_blackwell.py": """
        from cutlass.cute.nvgpu import tcgen05


        class MaskedGemmKernel:
            def __call__(self, a, b):
                return tcgen05.mma(a, b)
    """,
    "kernlib/moe.py": """
        from kernlib.utils import supported_compute_capability


        @supported_compute_capability([100, 103])
        def fused_moe(x):
            return x
    """,
    "kernlib/jit/__init__.py": "",
    "kernlib/jit/softmax.py": """
        from kernlib.jit.core import gen_jit_spec


        def gen_softmax_module():
            return gen_jit_spec("softmax", ["softmax.cu"], supported_major_versions=[10])
    """,
    "kernlib/utils.py": """
        def supported_compute_capability(ccs):
            return lambda f: f
    """,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def _engine(tmp_path: Path, metadata: str = _METADATA) -> Path:
    root = tmp_path / "tree"
    _write(root, _ENGINE)
    (root / "eng-1.0.dist-info").mkdir()
    (root / "eng-1.0.dist-info" / "METADATA").write_text(metadata)
    return root


def _cache_release() -> None:
    release = cache_dir() / "unpacked" / "kernlib_python-2.0-py3-none-any-0123456789ab"
    _write(release, _RELEASE)
    (release / ".complete").write_text("")


def _scan(root: Path, arch: str = "12.0", path: str = "eng/experts.py") -> dict[int, Finding]:
    options = ScanOptions(archs=(parse_arch(arch),), use_cache=False, binaries=False)
    found = run_scan([str(root)], options).findings
    return {f.line: f for f in found if f.path == path}


def test_pins_are_the_exact_requirements_without_markers(tmp_path: Path) -> None:
    assert pins(_engine(tmp_path)) == {"kernlib_python": "2.0"}


def test_a_pinned_release_says_what_the_path_it_is_asked_for_needs(tmp_path: Path) -> None:
    _cache_release()
    found = _scan(_engine(tmp_path))
    grouped, fused = found[6], found[10]
    assert grouped.severity == fused.severity == "low"
    assert grouped.consequence.startswith(
        "expected: that path needs tcgen05 (read from 'tcgen05' imported at line 1 in "
        "kernlib.kernels.masked_blackwell, which kernlib.blockscaled imports), which 12.0 lacks"
    )
    # the release's package re-exports fused_moe from kernlib.moe, whose own decorator admits 10.x
    assert fused.consequence.startswith(
        "expected: that path needs tcgen05 (read from @supported_compute_capability([100, 103]) on "
        "kernlib.moe.fused_moe, the pinned release's own check), which 12.0 lacks"
    )


def test_a_module_loaded_by_name_is_what_the_predicate_s_yes_runs(tmp_path: Path) -> None:
    # `find_spec("kernlib.jit.softmax")` in the test itself: the release builds it for major 10 only
    _cache_release()
    root = _engine(tmp_path)
    (root / "eng" / "sampling.py").write_text(
        "from importlib.util import find_spec\n\nimport torch\n\n\n"
        "def device_supported():\n"
        "    cap = torch.cuda.get_device_capability()\n"
        '    return cap == (10, 3) and find_spec("kernlib.jit.softmax") is not None\n'
    )
    (found,) = _scan(root, path="eng/sampling.py").values()
    assert found.severity == "low"
    assert found.consequence.startswith(
        "expected: that path needs tcgen05 (read from kernlib.jit.softmax.gen_softmax_module() built for "
        "10 only, the pinned release's own build list), which 12.0 lacks"
    )
    # a Jetson Thor has tcgen05, but the release builds the module for the SM100 family alone
    (thor,) = _scan(root, "11.0", "eng/sampling.py").values()
    assert thor.severity == "low"
    assert thor.consequence.startswith(
        "expected: that path needs code built for the SM100 family (sm_100a/sm_100f/sm_103a) (read from "
        "kernlib.jit.softmax.gen_softmax_module() built for 10 only"
    )


def test_without_the_release_the_paths_stay_medium(tmp_path: Path) -> None:
    # a directory fetches nothing: the release not at hand, nothing is read of it
    found = _scan(_engine(tmp_path))
    assert (found[6].severity, found[10].severity) == ("medium", "medium")


def test_an_unpinned_release_is_not_read(tmp_path: Path) -> None:
    _cache_release()
    found = _scan(_engine(tmp_path, _METADATA.replace("==2.0", ">=2.0")))
    assert (found[6].severity, found[10].severity) == ("medium", "medium")


def test_a_real_flashinfer_release(tmp_path: Path, wheel_cache: Path) -> None:
    """FlashInfer 0.6.18's CuTe-DSL masked grouped GEMM (`flashinfer.cute_dsl.blockscaled_gemm`)
    drives its SM100 kernel module, which imports tcgen05."""
    unpack_wheel(fetch_wheel(wheel_cache, "flashinfer-python==0.6.18"))
    root = _engine(tmp_path, _METADATA.replace("kernlib-python[cu13]==2.0", "flashinfer-python==0.6.18"))
    utils = root / "eng" / "utils.py"
    utils.write_text(
        utils.read_text().replace('"kernlib.blockscaled"', '"flashinfer.cute_dsl.blockscaled_gemm"')
    )
    utils.write_text(utils.read_text().replace('"grouped_gemm"', '"grouped_gemm_nt_masked"'))
    grouped = _scan(root)[6]
    assert grouped.severity == "low"
    assert "tcgen05" in grouped.consequence
    assert "flashinfer.gemm.kernels.grouped_gemm_masked_blackwell" in grouped.consequence


def test_an_installed_dist_s_pins_come_from_its_own_dist_info(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _write(site, _ENGINE)
    for dist, text in (("eng-1.0", _METADATA), ("other-2.0", _METADATA.replace("kernlib", "elsewhere"))):
        (site / f"{dist}.dist-info").mkdir()
        (site / f"{dist}.dist-info" / "METADATA").write_text(text)
    files = tuple(p for p in site.rglob("*.py"))
    assert pins(site, files, "eng") == {"kernlib_python": "2.0"}


def test_an_installed_dist_reads_the_release_installed_beside_it() -> None:
    """pydantic pins pydantic-core exactly; both installed in this environment: the release read
    is the installed one, found through the environment's own metadata (nothing downloaded)."""
    pytest.importorskip("pydantic_core")
    from capgap.scan.dependencies import Dependencies
    from capgap.targets import resolve_target

    target = resolve_target("pydantic")
    deps = Dependencies(target, fetch=False, tops=frozenset({"pydantic"}))
    if "pydantic_core" not in deps.pinned:
        pytest.skip("this pydantic does not pin pydantic-core exactly")
    found = deps.facts("pydantic_core.core_schema")
    assert found is not None and found.path == "pydantic_core/core_schema.py"
    assert deps.read == [f"pydantic_core {deps.pinned['pydantic_core']}"]


def test_a_release_pip_cannot_get_is_not_asked_for_again_soon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A downloaded target offline, or pinning a release the index lacks: pip is asked once, and the
    answer (not cached, so a later scan may read the release) comes without waiting on it again."""
    from capgap.errors import EnvironmentProblem
    from capgap.scan import dependencies
    from capgap.targets import Target

    asked: list[tuple[str, bool]] = []

    def unreachable(spec: str, pure: bool = False) -> Path:  # the boundary: pip, the index unreachable
        asked.append((spec, pure))
        raise EnvironmentProblem(f"pip download {spec!r} failed: no network")

    monkeypatch.setattr(dependencies, "download_wheel", unreachable)
    target = Target("eng-1.0-py3-none-any.whl", "wheel", _engine(tmp_path))
    for _ in range(2):
        deps = dependencies.Dependencies(target, fetch=True, tops=frozenset({"eng"}))
        assert deps.facts("kernlib.blockscaled") is None
        assert deps.missing == ["kernlib_python==2.0"]
    assert asked == [("kernlib_python==2.0", True)]  # a pure-Python wheel, asked for once


def test_a_damaged_wheel_in_the_cache_is_as_if_absent(tmp_path: Path) -> None:
    """`capgap scan` never fails for a dependency: a cached wheel that is no zip leaves the
    release unread and the path as it was."""
    from capgap.targets import wheel_dir

    wheels = wheel_dir("kernlib_python==2.0", pure=True)
    wheels.mkdir(parents=True)
    (wheels / "kernlib_python-2.0-py3-none-any.whl").write_bytes(b"not a zip at all")
    found = _scan(_engine(tmp_path))
    assert (found[6].severity, found[10].severity) == ("medium", "medium")


def test_a_release_is_fetched_as_a_pure_python_wheel_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release is read for its modules: pip is asked for a `py3-none-any` wheel, never for a
    platform wheel of compiled kernels (sgl-kernel 0.3.21: 535 MB)."""
    import subprocess

    from capgap import targets
    from capgap.errors import EnvironmentProblem

    ran: list[list[str]] = []

    def pip(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:  # the boundary: pip
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found")

    monkeypatch.setattr(targets.subprocess, "run", pip)
    with pytest.raises(EnvironmentProblem):
        targets.download_wheel("sgl_kernel==0.3.21", pure=True)
    (cmd,) = ran
    assert cmd[cmd.index("--platform") :][:6] == [
        "--platform",
        "any",
        "--implementation",
        "py",
        "--abi",
        "none",
    ]
    assert targets.wheel_dir("x==1", pure=True) != targets.wheel_dir("x==1")
