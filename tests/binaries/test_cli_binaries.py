"""`capgap binaries`: table and JSON output, exit codes, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run_cli


@pytest.fixture
def libs(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables to the terminal width
    for name in ("multi.so", "compressed.so", "sm120a.cubin"):
        shutil.copy(data_dir / name, tmp_path / name)
    return tmp_path


def test_json_lists_archs_verdicts_and_findings(libs: Path) -> None:
    result = run_cli("binaries", str(libs), "--arch", "9.0", "--format", "json")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert data["archs"] == ["9.0"]
    (target,) = data["targets"]
    assert target["binaries_read"] == 3
    got = {
        lib["library"]: (lib["sass"], lib["ptx"], lib["verdicts"][0]["status"], lib["verdicts"][0]["via"][:1])
        for lib in target["libraries"]
    }
    assert got == {
        "compressed.so": (["sm_80", "sm_90"], ["compute_90"], "native", ["sm_90"]),
        "multi.so": (["sm_80", "sm_90a", "sm_100", "sm_120"], ["compute_120"], "native", ["sm_90a"]),
        "sm120a.cubin": (["sm_120a"], [], "missing", []),
    }
    multi = next(lib for lib in target["libraries"] if lib["library"] == "multi.so")
    assert (multi["ptx_isa_versions"], multi["images"], multi["compressed_images"]) == (["9.0"], 5, 1)
    assert (multi["empty_modules_images"], multi["modules"]) == (4, 1)
    (finding,) = target["findings"]
    # multi.so beside it carries sm_90 SASS: the build knew 9.0 and left the cubin out (medium)
    assert (finding["rule"], finding["severity"], finding["path"], finding["missing"]) == (
        "binary-missing-arch",
        "medium",
        "sm120a.cubin",
        "sm_90",
    )
    assert finding["consequence"] == "no kernel image is available for execution on the device"
    assert target["skipped"] == []


def test_text_table_with_two_archs(libs: Path) -> None:
    result = run_cli(
        "binaries", str(libs / "multi.so"), str(libs / "compressed.so"), "--arch", "12.0", "--arch", "9.0"
    )
    assert result.code == 0, result.err
    assert "on 12.0" in result.out and "on 9.0" in result.out
    assert "native sm_90a" in result.out
    assert "PTX JIT from" in result.out and "compute_120" in result.out
    assert "NO IMAGE" not in result.out


def test_missing_image_exits_1_and_says_so(libs: Path) -> None:
    result = run_cli("binaries", str(libs / "sm120a.cubin"), "--arch", "sm_100")
    assert result.code == 1
    assert "NO IMAGE" in result.out
    assert "no kernel image is available for execution on the device" in result.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arch", "13.7"], "unknown GPU architecture"),
        (["--arch", "12.0", "--format", "sarif"], "text or json"),
    ],
)
def test_bad_options_exit_2(libs: Path, args: list[str], message: str) -> None:
    result = run_cli("binaries", str(libs), *args)
    assert result.code == 2
    assert message in result.err


def test_unknown_target_exits_2(tmp_path: Path) -> None:
    result = run_cli("binaries", str(tmp_path / "nope" / "lib.so"), "--arch", "12.0")
    assert result.code == 2
    assert "error:" in result.err


def test_without_arch_and_without_gpus_exits_2(libs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import capgap.binaries.report as report

    def no_gpus() -> list:
        from capgap.errors import EnvironmentProblem

        raise EnvironmentProblem("no --arch given and no GPU found on this machine; pass --arch")

    monkeypatch.setattr(report, "probed_archs", no_gpus)
    result = run_cli("binaries", str(libs))
    assert result.code == 2
    assert "pass --arch" in result.err


def test_probed_archs_without_probe_module_or_gpu_is_an_environment_problem() -> None:
    # real call: on this CPU machine either the probe module is absent or it finds no GPU
    from capgap.binaries.report import probed_archs
    from capgap.errors import EnvironmentProblem

    try:
        archs = probed_archs()
    except EnvironmentProblem as exc:
        assert "pass --arch" in str(exc)
    else:  # a machine with GPUs: the archs are real ones
        assert archs and all(a.major >= 5 for a in archs)


def test_archs_dedupe_by_compute_capability() -> None:
    from capgap.binaries.report import resolve_archs

    assert [a.cc for a in resolve_archs(["sm_90a", "9.0", "12.0", "sm_120"])] == ["9.0", "12.0"]


def test_probed_archs_come_from_the_probe_module(monkeypatch: pytest.MonkeyPatch) -> None:
    # boundary fake: the probe module's Machine/Gpu shape (capgap.probe.gpus), GPUs of two kinds
    import sys
    import types
    from dataclasses import dataclass, field

    @dataclass
    class Gpu:
        compute_capability: str

    @dataclass
    class Machine:
        gpus: list[Gpu] = field(default_factory=list)

    fake = types.ModuleType("capgap.probe.gpus")
    fake.probe_machine = lambda: Machine([Gpu("12.0"), Gpu("12.0"), Gpu("9.0")])  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "capgap.probe.gpus", fake)
    from capgap.binaries.report import probed_archs

    assert [a.cc for a in probed_archs()] == ["12.0", "9.0"]
