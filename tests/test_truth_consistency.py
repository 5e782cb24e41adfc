"""benchmarks/truth_consistency.py: the same statement judged differently in two truth files."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "truth_consistency.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("capgap_truth_consistency", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


consistency = _load_script()

_GATE = "import torch\n\n\ndef fast():\n{pad}    return torch.cuda.get_device_capability()[0] == 10\n"


def _wheel(cache: Path, version: str, pad: str) -> None:
    with zipfile.ZipFile(cache / f"eng-{version}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("eng/gate.py", _GATE.format(pad=pad))


def _truth(tmp: Path, version: str, line: int, kind: str, severity: str | None) -> Path:
    case = {"path": "eng/gate.py", "line": line, "span": [line, line], "kind": kind, "severity": severity}
    path = tmp / f"eng-{version}.json"
    path.write_text(json.dumps({"engine": "eng", "version": version, "items": [case]}))
    return path


def test_the_same_statement_judged_two_ways_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the statement moved down a line in 1.1 (a comment above it): still the same statement
    _wheel(tmp_path, "1.0", "")
    _wheel(tmp_path, "1.1", "    # measured on B200\n")
    files = [_truth(tmp_path, "1.0", 5, "gap", "medium"), _truth(tmp_path, "1.1", 6, "expected", None)]
    assert consistency.main([*map(str, files), "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "eng at 12.0: eng/gate.py: return torch.cuda.get_device_capability()[0] == 10" in out
    assert "1.0          gap/medium" in out and "1.1          expected" in out
    assert out.strip().endswith("1 statements judged differently, of 1 read in 2 cases; 0 unread")


def test_agreeing_verdicts_and_unread_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _wheel(tmp_path, "1.0", "")
    files = [_truth(tmp_path, "1.0", 5, "gap", "medium"), _truth(tmp_path, "2.0", 5, "expected", None)]
    assert consistency.main([*map(str, files), "--cache", str(tmp_path)]) == 0  # 2.0: no wheel cached
    out = capsys.readouterr().out.strip()
    assert out == "0 statements judged differently, of 1 read in 1 cases; 1 unread"


def test_a_malformed_truth_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert consistency.main([str(bad), "--cache", str(tmp_path)]) == 2
    assert "not a readable truth file" in capsys.readouterr().err
