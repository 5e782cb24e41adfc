"""Configuration files: found upward, capgap.toml before pyproject.toml, keys checked, flags win,
and what each key does to a scan's findings and exit code."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from capgap.errors import UsageError
from capgap.settings import discover, find_config
from tests.cli_runner import run_cli
from tests.scan.fixture_tree import write_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("toy"))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _json(*args: str) -> tuple[int, dict]:
    result = run_cli("scan", *args, "--format", "json")
    assert result.code in (0, 1), result.err
    return result.code, json.loads(result.out)


def test_found_upward_and_capgap_toml_wins(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    _write(tmp_path / "pyproject.toml", '[tool.capgap]\nfail-on = "low"\n')
    assert find_config(deep) == tmp_path / "pyproject.toml"
    _write(tmp_path / "a" / "pyproject.toml", '[project]\nname = "x"\n')  # no [tool.capgap]: passed over
    assert find_config(deep) == tmp_path / "pyproject.toml"
    _write(tmp_path / "capgap.toml", 'fail-on = "medium"\n')
    assert find_config(deep) == tmp_path / "capgap.toml"  # same directory: capgap.toml wins
    assert discover(start=deep).fail_on == "medium"
    assert discover(no_config=True, start=deep).path is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('fail_on = "low"\n', "unknown key 'fail_on' (did you mean 'fail-on'?)"),
        ('colour = "red"\n', "unknown key 'colour'"),
        ('fail-on = "fatal"\n', "'fail-on' must be one of low, medium, high"),
        ("arch = 12\n", "'arch' must be a string or a list of strings"),
        ('arch = ["12.0", "sm_999x"]\n', "'arch': unknown GPU architecture 'sm_999x'"),
        ('ignore = ["no-such-rule"]\n', "'ignore' names an unknown rule 'no-such-rule'"),
        ('per-path-ignores = { "t/**" = ["gate-excludes"] }\n', "unknown rule 'gate-excludes'"),
        ('acknowledged = [{ fingerprint = "ab" }]\n', "acknowledged[0].reason must be a non-empty string"),
        (
            'acknowledged = [{ fingerprint = "ab", reason = "r", why = 1 }]\n',
            "unknown key acknowledged[0].why",
        ),
        ("patch-store = 3\n", "'patch-store' must be a non-empty string"),
        ("fail-on = \n", "is not valid TOML"),
    ],
)
def test_bad_configs_are_one_line_usage_errors(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch, text: str, says: str
) -> None:
    _write(tmp_path / "capgap.toml", text)
    monkeypatch.chdir(tmp_path)
    result = run_cli("scan", str(tree), "--arch", "12.0")
    assert result.code == 2 and result.out == ""
    assert says in result.err and str(tmp_path / "capgap.toml") in result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err


def test_config_named_in_output_and_flags_win(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _write(tmp_path / "pyproject.toml", '[tool.capgap]\narch = "10.0"\nfail-on = "low"\n')
    monkeypatch.chdir(tmp_path)
    code, data = _json(str(tree))
    assert data["config"] == str(config) and data["arch"] == "10.0"  # the file's arch
    assert code == 1  # fail-on low: any finding fails
    code, data = _json(str(tree), "--arch", "12.0", "--fail-on", "high")
    assert data["arch"] == "12.0"
    text = run_cli("scan", str(tree), "--arch", "12.0")
    assert f"config: {config}" in text.out.splitlines()
    assert _json(str(tree), "--no-config", "--arch", "12.0")[1]["config"] is None
    other = _write(tmp_path / "elsewhere" / "capgap.toml", 'arch = ["9.0", "12.0"]\n')
    assert _json(str(tree), "--config", str(other))[1]["arch"] == ["9.0", "12.0"]
    missing = run_cli("scan", str(tree), "--config", str(tmp_path / "none.toml"))
    assert missing.code == 2 and "no such file" in missing.err
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    assert "not a regular file" in run_cli("scan", str(tree), "--config", str(fifo)).err  # never opened
    (tmp_path / "deeper" / "capgap.toml").mkdir(parents=True)  # a directory of that name is no config
    assert find_config(tmp_path / "deeper") == config


def test_select_ignore_exclude_and_per_path_ignores(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, everything = _json(str(tree), "--arch", "12.0", "--no-config")
    rules = {f["rule"] for f in everything["findings"]}
    paths = {f["path"] for f in everything["findings"]}
    assert {"table-missing-arch", "gate-excludes-arch"} <= rules and "toyengine/layers/attention.py" in paths
    _write(tmp_path / "capgap.toml", 'select = ["table-missing-arch"]\n')
    _, data = _json(str(tree), "--arch", "12.0")
    assert {f["rule"] for f in data["findings"]} == {"table-missing-arch"}
    _, data = _json(str(tree), "--arch", "12.0", "--select", "gate-excludes-arch,table-missing-arch")
    assert {f["rule"] for f in data["findings"]} == {
        "table-missing-arch",
        "gate-excludes-arch",
    }  # the flag wins
    _write(tmp_path / "capgap.toml", 'ignore = ["table-missing-arch"]\nexclude = ["toyengine/layers/**"]\n')
    _, data = _json(str(tree), "--arch", "12.0")
    assert data["findings"] and not any(f["rule"] == "table-missing-arch" for f in data["findings"])
    assert not any(f["path"].startswith("toyengine/layers/") for f in data["findings"])
    _write(
        tmp_path / "capgap.toml", 'per-path-ignores = { "toyengine/kernels/*" = ["table-missing-arch"] }\n'
    )
    _, data = _json(str(tree), "--arch", "12.0")
    kept = {(f["rule"], f["path"]) for f in data["findings"]}
    assert ("table-missing-arch", "toyengine/comm/sizes.py") in kept
    assert not any(r == "table-missing-arch" and p.startswith("toyengine/kernels/") for r, p in kept)
    assert any(
        p.startswith("toyengine/kernels/")
        for _r, p in {(f["rule"], f["path"]) for f in everything["findings"]}
    )
    # what a config hides never shifts the fingerprints of what it keeps
    before = {f["fingerprint"] for f in everything["findings"]}
    assert {f["fingerprint"] for f in data["findings"]} <= before
    bad = run_cli("scan", str(tree), "--arch", "12.0", "--ignore", "nope")
    assert bad.code == 2 and "unknown rule 'nope'" in bad.err


def test_acknowledged_are_hidden_marked_and_not_counted(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, data = _json(str(tree), "--arch", "12.0", "--no-config")
    highs = [f for f in data["findings"] if f["severity"] == "high"]
    assert highs
    entries = "".join(
        f'[[acknowledged]]\nfingerprint = "{f["fingerprint"]}"\nreason = "intended: seen in review"\n'
        for f in highs
    )
    _write(tmp_path / "capgap.toml", entries)
    code, data = _json(str(tree), "--arch", "12.0")
    assert code == 0  # the only highs are acknowledged
    marked = [f for f in data["findings"] if "acknowledged" in f]
    assert len(marked) == len(highs) and all(f["acknowledged"] == "intended: seen in review" for f in marked)
    text = run_cli("scan", str(tree), "--arch", "12.0")
    assert text.code == 0
    for f in highs:
        assert f["message"] not in text.out
    assert f"{len(highs)} acknowledged in {tmp_path / 'capgap.toml'}" in text.out
    assert not any("match no finding" in n for n in data["notices"])
    _write(tmp_path / "capgap.toml", entries + '[[acknowledged]]\nfingerprint = "0000"\nreason = "gone"\n')
    _, data = _json(str(tree), "--arch", "12.0")
    assert (
        f"1 acknowledged fingerprint(s) in {tmp_path / 'capgap.toml'} match no finding: 0000"
        in data["notices"]
    )
    sarif = json.loads(run_cli("scan", str(tree), "--arch", "12.0", "--format", "sarif").out)
    suppressed = [r for r in sarif["runs"][0]["results"] if r.get("suppressions")]
    assert len(suppressed) == len(highs)


def test_patch_store_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from capgap.patches.store import store_dir

    _write(tmp_path / "infra" / "pyproject.toml", '[tool.capgap]\npatch-store = "../patches"\n')
    monkeypatch.chdir(tmp_path / "infra")
    assert store_dir() == (tmp_path / "patches").resolve()  # relative to the file
    assert store_dir("given") == Path("given")  # --store wins
    result = run_cli("patch", "list")  # the patch verbs read it too
    assert (
        result.code == 0
        and f"no saved patches in {(tmp_path / 'patches').resolve()}" in result.out + result.err
    )
    monkeypatch.setenv("CAPGAP_STORE", str(tmp_path / "env"))
    assert store_dir() == tmp_path / "env"  # the environment's over the file's


def test_unknown_config_errors_in_library_too(tmp_path: Path) -> None:
    _write(tmp_path / "capgap.toml", "nope = 1\n")
    with pytest.raises(UsageError, match="unknown key 'nope'"):
        discover(start=tmp_path)


@pytest.mark.parametrize(
    ("path", "pattern", "matches"),
    [
        ("sglang/test/a.py", "sglang/test", True),  # a parent directory
        ("sglang/test/a.py", "sglang/test/**", True),
        ("sglang/test/a.py", "sglang/*.py", True),  # `*` crosses `/`, as fnmatch's does
        ("sglang/srt/x/test_a.py", "test_*.py", True),  # no `/`: any path component
        ("sglang/srt/tests/a.py", "tests", True),
        ("sglang/srt/a.py", "tests", False),
        ("sglang/testing/a.py", "sglang/test", False),  # a prefix of a name is not a directory
        ("sglang/srt/a.py", "/sglang/srt/", True),
    ],
)
def test_path_globs(path: str, pattern: str, matches: bool) -> None:
    from capgap.scan.filters import path_matches

    assert path_matches(path, pattern) is matches
