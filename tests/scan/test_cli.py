"""`capgap scan` end to end: exit codes, JSON shape, text, SARIF against the published schema."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.scan.fixture_tree import write_tree

SCHEMA = Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("toy"))


def test_json_has_the_contract_shape(tree: Path) -> None:
    result = run_cli("scan", str(tree), "--arch", "sm_120", "--format", "json", "--no-cache")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert list(data) == ["arch", "targets", "findings", "skipped", "notices", "config"]
    assert data["config"] is None  # no capgap.toml or [tool.capgap] above the test's directory
    assert data["arch"] == "12.0"
    resolved = f"{tree} (directory {tree})"
    assert data["targets"] == [
        {"spec": str(tree), "root": str(tree), "files": 9, "kind": "path", "resolved": resolved}
    ]
    first = data["findings"][0]
    assert {
        "rule",
        "severity",
        "path",
        "line",
        "symbol",
        "present",
        "missing",
        "consequence",
        "message",
    } <= set(first)
    assert data["skipped"] == []
    assert any(f["severity"] == "low" for f in data["findings"])  # JSON always carries expected gates


def test_text_hides_expected_gates_unless_all(tree: Path) -> None:
    plain = run_cli("scan", str(tree), "--arch", "12.0")
    assert plain.code == 1
    assert "SYMM_MAX_SIZES has entries for 9, 10 but none for 12.0: add 12" in plain.out
    assert "3 low (expected gaps; --all shows them)" in plain.out
    assert "trtllm_gen" not in plain.out and "that path needs tcgen05" not in plain.out
    everything = run_cli("scan", str(tree), "--arch", "12.0", "--all")
    assert "that path needs tcgen05" in everything.out


def test_exit_codes_follow_fail_on(tmp_path: Path) -> None:
    (tmp_path / "gate.py").write_text(
        "import torch\n\ndef f():\n"
        "    if torch.cuda.get_device_capability()[0] == 10:\n"
        "        return fast()\n"
    )
    assert run_cli("scan", str(tmp_path), "--arch", "12.0").code == 0  # medium < high
    assert run_cli("scan", str(tmp_path), "--arch", "12.0", "--fail-on", "medium").code == 1
    assert run_cli("scan", str(tmp_path), "--arch", "10.0", "--fail-on", "low").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--arch", "13.7"), "unknown GPU architecture '13.7'"),
        (("--arch", "12.0", "--format", "xml"), "--format must be one of text, json, sarif"),
        (("--arch", "12.0", "--fail-on", "worst"), "--fail-on must be one of low, medium, high"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(tree: Path, args: tuple[str, ...], message: str) -> None:
    result = run_cli("scan", str(tree), *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err


def test_without_arch_or_gpu_exit_2(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from capgap.scan import machine

    monkeypatch.setattr(machine, "_probed_gpus", lambda: [])  # this machine has no GPU either way
    result = run_cli("scan", str(tree))
    assert result.code == 2
    assert "no --arch given and no GPU found" in result.err


def test_probed_gpus_give_archs_and_devices(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from capgap.scan import machine

    gpu = SimpleNamespace(name="NVIDIA RTX PRO 6000 Blackwell Server Edition", compute_capability="12.0")
    monkeypatch.setattr(machine, "_probed_gpus", lambda: [gpu, gpu])
    archs, devices = machine.resolve_archs_and_devices([], [])
    assert [a.cc for a in archs] == ["12.0"]
    assert devices == ("NVIDIA RTX PRO 6000 Blackwell Server Edition",)
    assert machine.resolve_archs_and_devices(["9.0"], ["H200"])[1] == ("H200",)


def test_sarif_is_valid_against_the_published_schema(tree: Path) -> None:
    import jsonschema

    result = run_cli("scan", str(tree), "--arch", "12.0", "--format", "sarif")
    assert result.code == 1
    sarif = json.loads(result.out)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    results = sarif["runs"][0]["results"]
    assert len(results) == 17
    table = next(r for r in results if r["properties"]["symbol"] == "SYMM_MAX_SIZES")
    assert table["level"] == "warning"  # medium: `.get()` turns the path off, no KeyError
    keyerror = next(r for r in results if r["properties"]["symbol"] == "ARCH_BLOCK_CONFIGS")
    assert keyerror["level"] == "error"
    assert table["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "toyengine/comm/sizes.py"


def test_two_targets_one_report(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "t.py").write_text(
        textwrap.dedent("""
        ARCH_TILES = {"9.0": 1, "10.0": 2}
        """)
    )
    data = json.loads(run_cli("scan", str(tree), str(other), "--arch", "12.0", "-f", "json").out)
    assert [t["spec"] for t in data["targets"]] == [str(tree), str(other)]
    mine = [f for f in data["findings"] if f["target"] == str(other)]
    assert [(f["path"], f["symbol"], f["missing"]) for f in mine] == [("t.py", "ARCH_TILES", '"12.0"')]


def test_text_output_shows_config_coverage_as_a_shape_table_per_directory(tmp_path) -> None:
    from tests.configs.test_fixer import RTX_FILE, D, _tree

    _tree(tmp_path)
    res = run_cli(
        "scan",
        str(tmp_path),
        "--arch",
        "12.0",
        "--no-cache",
        "--device",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    )
    assert res.code == 0, res.err  # config-missing-device is medium: below the default --fail-on
    flat = " ".join(res.out.split())
    assert f"{D}: {RTX_FILE} (cc 12.0) lacks" in flat
    assert "shape family" in flat and "siblings have" in flat
    assert "config-missing-device" not in res.out  # not repeated as a generic finding line


def test_a_scan_process_ends_with_all_its_output_and_its_exit_code(tree: Path, tmp_path: Path) -> None:
    """A scan process skips the interpreter's teardown (os._exit): what it printed must all be there,
    into a file or a pipe, with the exit code the findings call for."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "capgap", "scan", str(tree), "--arch", "12.0", "--no-cache"]
    in_process = run_cli(*cmd[3:], "--format", "json")
    with (tmp_path / "out.json").open("wb") as fh:
        proc = subprocess.run([*cmd, "--format", "json"], stdout=fh, stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 1 == in_process.code, proc.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == json.loads(in_process.out)
    piped = subprocess.run([*cmd, "--all"], capture_output=True, text=True, timeout=120)
    assert piped.returncode == 1
    assert (
        piped.stdout.rstrip()
        .splitlines()[-1]
        .startswith(f"{len(json.loads(in_process.out)['findings'])} findings")
    )
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "m.py").write_text("x = 1\n")
    clean = subprocess.run([*cmd[:4], str(tmp_path / "clean"), *cmd[5:]], capture_output=True, timeout=120)
    assert (clean.returncode, clean.stdout.decode().splitlines()[-1].split()[0]) == (0, "0")


def test_a_usage_error_leaves_no_grep_running(tree: Path) -> None:
    from capgap.reading import grepfilter

    assert run_cli("scan", str(tree), "--format", "yaml").code == 2
    assert str(tree) not in grepfilter._STARTED  # started before the options were read, then stopped
