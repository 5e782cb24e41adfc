"""The text report: what to do first (highs by subsystem, the fix command), the rest by file,
--where, --model, --max, and a summary naming what hid and the flag that shows it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli_runner import run_cli
from tests.scan.report_tree import HOSTILE_NAME, write_report_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report_tree(tmp_path_factory.mktemp("plain"))


def _scan(tree: Path, *args: str) -> str:
    result = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", *args)
    assert result.code == 1, result.err  # the high table: exit 1 whatever the text shows
    return result.out


def _summary(out: str) -> str:
    return next(line for line in out.splitlines() if " findings for 12.0: " in line)


def test_opens_with_the_highs_by_subsystem_then_the_rest_by_file(tree: Path) -> None:
    out = _scan(tree)
    lines = out.splitlines()
    first = lines.index("What to do first: 1 high for 12.0, by subsystem")
    assert lines[first + 1] == "  communication"
    assert lines[first + 2].startswith("    high eng/comm/all_reduce.py:3  MAX_SIZES has entries for")
    assert lines[first + 3] == "         -> KeyError at run time on 12.0 (eng/comm/all_reduce.py:7)"
    rest = lines.index("The rest, by file")
    assert first < rest
    # the high is not listed twice; the rest come file by file
    assert out.count("MAX_SIZES has entries") == 1
    files = [line for line in lines[rest:] if line.startswith("eng/")]
    assert files == sorted(files) == [HOSTILE_NAME, "eng/models/llama_x.py", "eng/models/qwen_y.py"]


def test_a_plain_directory_gets_the_dry_run_command(tree: Path) -> None:
    fix = next(line for line in _scan(tree).splitlines() if line.strip().startswith("fix: "))
    cmd = shlex.split(fix.strip().removeprefix("fix: "))
    assert cmd == ["capgap", "fix", str(tree), "--arch", "12.0", "--only", "MAX_SIZES",
                   "--path", str(tree / "eng/comm/all_reduce.py"), "--dry-run"]


def test_the_fix_command_of_a_checkout_fixes_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_report_tree(tmp_path / "checkout", git=True)
    monkeypatch.setenv("CAPGAP_STORE", str(tmp_path / "store"))
    fix = next(line for line in _scan(root).splitlines() if line.strip().startswith("fix: "))
    cmd = shlex.split(fix.strip().removeprefix("fix: "))
    assert cmd[:2] == ["capgap", "fix"] and "--dry-run" not in cmd
    result = run_cli(*cmd[1:])
    assert result.code == 0, result.err
    assert "MAX_SIZES = {(9, 0): 1, (10, 0): 2, (12, 0): 2}" in (root / "eng/comm/all_reduce.py").read_text()


def test_where_hides_tests_by_default_and_says_how_to_show_them(tree: Path) -> None:
    out = _scan(tree, "--all")
    assert "tests/test_pick.py" not in out
    assert "1 outside the runtime (tests, benchmarks, examples; --where all shows them)" in _summary(out)
    only = _scan(tree, "--where", "test")  # tests are rated low: asking for them shows them
    assert "tests/test_pick.py" in only and "eng/models/qwen_y.py" not in only
    assert "tests/test_pick.py" in _scan(tree, "--all", "--where", "all")


def test_low_findings_hide_unless_all(tree: Path) -> None:
    # the test's gate is low (not runtime) and outside the runtime: the first filter counts it
    summary = _summary(_scan(tree, "--where", "all"))
    assert "1 low (expected gaps; --all shows them)" in summary


def test_model_keeps_the_runtime_and_that_models_files(tree: Path) -> None:
    out = _scan(tree, "--model", "llama-x")  # spelled as the user likes: llama-x, llama_x, llama_x.py
    assert "eng/models/llama_x.py" in out and "eng/models/qwen_y.py" not in out
    assert "eng/comm/all_reduce.py" in out  # runtime, no model: kept
    assert "1 of other models (dropping --model shows them)" in _summary(out)
    assert "eng/models/qwen_y.py" in _scan(tree)


def test_a_model_without_files_says_so(tree: Path) -> None:
    result = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", "--model", "gpt9")
    assert "--model gpt9: no finding is in a file of that model (models with findings: llama_x, qwen_y)" in (
        " ".join(result.err.split())
    )


def test_max_limits_what_is_shown_and_counts_the_rest(tree: Path) -> None:
    out = _scan(tree, "--max", "2")
    summary = _summary(out)
    assert "2 shown" in summary and "past --max (--max 0 shows them)" in summary
    full = _summary(_scan(tree))
    shown = int(full.split("; ")[1].split(" shown")[0])
    assert f"{shown - 2} past --max" in summary
    assert "MAX_SIZES has entries" in out  # the highs come first


def test_json_keeps_every_finding_whatever_the_filters(tree: Path) -> None:
    plain = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", "--format", "json")
    narrowed = run_cli("scan", str(tree), "--arch", "12.0", "--no-cache", "--format", "json",
                       "--max", "1", "--model", "llama_x", "--where", "test")
    assert json.loads(plain.out) == json.loads(narrowed.out)
    paths = {f["path"] for f in json.loads(plain.out)["findings"]}
    assert {"tests/test_pick.py", "eng/models/qwen_y.py", HOSTILE_NAME} <= paths


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--where", "tests"], "--where must be one of runtime, test, all, not 'tests'"),
        (["--max", "-1"], "--max must be 0 (no limit) or more, not -1"),
        (["--model", " "], "--model needs a model name"),
    ],
)
def test_bad_filters_are_one_line_errors(tree: Path, args: list[str], message: str) -> None:
    result = run_cli("scan", str(tree), "--arch", "12.0", *args)
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
