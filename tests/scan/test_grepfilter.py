"""grep as the first pass of the pre-filter: real grep, compared with the Python pre-filter it
stands in front of; a grep that fails (a fake one on PATH) must leave results unchanged."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from capgap.reading import grepfilter, prefilter
from tests.cli_runner import run_cli
from tests.scan.fixture_tree import write_tree

pytestmark = pytest.mark.skipif(shutil.which("grep") is None, reason="no grep on PATH")

# One file per way a file can pass the pre-filter, in several letter cases, and files that
# must not pass (close spellings).
PASSING = {
    "cap.py": "x = torch.cuda.get_device_CAPABILITY()\n",
    "bw.py": "IS_BLACKWELL = True\n",
    "hopper.py": "use_Hopper = 1\n",
    "devsm.py": "n = props.device_SM_count\n",
    "archlist.py": "TORCH_CUDA_ARCH_LIST = '9.0'\n",
    "cudaarch.py": "flags = ['-D__CUDA_ARCH__']\n",
    "smver.py": "if sm_version > 1: pass\n",
    "gencode.py": "f = '-gencode arch=compute_90'\n",
    "sm90.py": "kernel = 'SM90'\n",
    "sm_100.py": "KERNEL = 'fmha_sm_100'\n",
    "key9.py": "T = {\n9: 1}\n",
    "key10.py": "T = {10: 1}\n",
    "dotted.py": 'T = {"9.0": 1}\n',
    "single.py": "T = {'9.0': 1}\n",
    "tuple.py": "T = {(9, 0): 1}\n",
    "smkey.py": 'T = {"sm_90a": 1}\n',
}
NOT_PASSING = {
    "plain.py": "def f(x):\n    return x + 1\n",
    "close.py": "capable = small = asm = 9\nT = {19:1}\n",
}


def _tree(tmp_path: Path) -> Path:
    for name, text in {**PASSING, **NOT_PASSING}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_grep_names_every_file_the_prefilter_passes_and_none_without_a_token(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    paths = sorted(str(p) for p in root.iterdir())
    python_says = {p for p in paths if prefilter.worth_parsing(Path(p).read_bytes())}
    assert {Path(p).name for p in python_says} == set(PASSING)
    for workers in (1, 2, 5):
        assert grepfilter.candidates(paths, workers) == python_says


def test_the_prefetch_walks_like_the_scan_and_skips_what_it_skips(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "pkg").mkdir()
    (root / "pkg" / "deep.py").write_text("major = get_device_capability()[0]\n")
    (root / ".git").mkdir()
    (root / ".git" / "hook.py").write_text("x = get_device_capability()\n")
    (root / "notes.txt").write_text("capability\n")
    grepfilter.prefetch(str(root))
    stream = grepfilter.prefetched(str(root))
    assert stream is not None
    assert set(stream) == {*PASSING, "pkg/deep.py"} and stream.ok
    assert grepfilter.prefetched(str(root)) is None  # collected once


def _scan_json(root: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, object]:
    with monkeypatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        result = run_cli("scan", str(root), "--arch", "12.0", "--no-cache", "--format", "json")
    assert result.code in (0, 1), result.err
    data = json.loads(result.out)
    data.pop("targets")
    return data


def test_findings_are_the_same_with_grep_without_it_and_with_a_broken_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    write_tree(root)
    for i in range(250):  # enough files for the after-the-walk grep too
        (root / f"filler_{i}.py").write_text(f"def f{i}(x):\n    return x * {i}\n")
    (root / "linked.py").symlink_to(root / "toyengine" / "kernels" / "configs.py")  # grep -r skips links
    broken = tmp_path / "bin"
    broken.mkdir()
    fake = broken / "grep"
    fake.write_text("#!/bin/sh\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    plain = _scan_json(root, monkeypatch, CAPGAP_GREP="0")
    assert plain["findings"], "the fixture tree has findings"
    assert any(f["path"] == "linked.py" for f in plain["findings"])  # type: ignore[union-attr,index]
    assert _scan_json(root, monkeypatch) == plain
    assert _scan_json(root, monkeypatch, PATH=f"{broken}{os.pathsep}{os.environ['PATH']}") == plain


def test_the_one_regex_names_exactly_the_files_holding_a_token(tmp_path: Path) -> None:
    """grep runs the tokens as one extended regex: it must mean the same as the fixed strings."""
    import random

    rng = random.Random(7)
    pieces = [t.decode() for t in grepfilter.TOKENS] + [
        "sm_",
        "sm",
        "9:",
        "10:",
        ".0",
        "0)",
        "(9, 0",
        "x",
        "\n",
    ]
    paths = []
    for i in range(300):
        text = "".join(
            rng.choice(pieces) if rng.random() < 0.03 else rng.choice("ab :.,'\"()_s019\n") for _ in range(40)
        )
        path = tmp_path / f"f{i}.py"
        path.write_text(text.upper() if i % 3 == 0 else text)
        paths.append(str(path))
    holding = {p for p in paths if any(t in Path(p).read_bytes().lower() for t in grepfilter.TOKENS)}
    assert 50 < len(holding) < 290  # both kinds are well represented
    assert grepfilter.candidates(paths, 2) == holding


def test_the_command_line_prefetch_knows_every_scan_option_that_takes_a_value() -> None:
    import typer.main

    from capgap.cli import build_app

    command = typer.main.get_command(build_app(("scan",))).commands["scan"]  # type: ignore[attr-defined]
    options = [p for p in command.params if p.param_type_name == "option"]
    takes_value = {name for p in options if not p.is_flag for name in p.opts}
    assert takes_value == grepfilter.SCAN_VALUE_OPTIONS


def test_the_command_line_prefetch_starts_grep_for_target_directories_only(tmp_path: Path) -> None:
    targets, python_dir, after_dashes = tmp_path / "engine", tmp_path / "env", tmp_path / "-odd"
    for d in (targets, python_dir, after_dashes):
        d.mkdir()
    args = [str(targets), "--python", str(python_dir), "--arch", "12.0", "--no-cache", "sglang==0.5.9"]
    try:
        grepfilter.prefetch_command_line([*args, "--", str(after_dashes)])
        mine = {str(d.resolve()) for d in (targets, python_dir, after_dashes)}
        assert set(grepfilter._STARTED) & mine == {str(targets.resolve()), str(after_dashes.resolve())}
        grepfilter.prefetch_command_line([str(python_dir), "--help"])
        assert str(python_dir.resolve()) not in grepfilter._STARTED
    finally:
        for root in list(grepfilter._STARTED):
            grepfilter.discard(root)


@pytest.mark.parametrize("spawn", ["posix_spawn", "subprocess"])
def test_a_prefetched_grep_streams_the_same_names_however_it_was_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn: str
) -> None:
    root = _tree(tmp_path)
    if spawn == "subprocess":  # a platform without os.posix_spawn
        monkeypatch.delattr(os, "posix_spawn", raising=False)
    grepfilter.prefetch(str(root))
    stream = grepfilter.prefetched(str(root))
    assert stream is not None
    assert set(stream) == set(PASSING) and stream.ok
    grepfilter.prefetch(str(root))  # started, then not needed: killed and reaped
    started = grepfilter._STARTED[str(root)]
    grepfilter.discard(str(root))
    assert str(root) not in grepfilter._STARTED
    with pytest.raises(ChildProcessError):
        os.waitpid(started.pid, os.WNOHANG)  # already reaped: no zombie left
