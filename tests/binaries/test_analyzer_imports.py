"""A target without any candidate binary costs the binaries analyzer one walk: no reader import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

_CHILD = """
import sys
from capgap.arch import parse_arch
from capgap.binaries import analyzer
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target
options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False)
result = analyzer.analyze(resolve_target(sys.argv[1]), options)
print(result.files, "capgap.binaries.reader" in sys.modules, "elftools" in sys.modules)
"""


def _child(tree: Path) -> list[str]:
    argv = [sys.executable, "-c", _CHILD, str(tree)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    return proc.stdout.split()


def test_no_candidate_no_reader(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("so what\n")
    assert _child(tmp_path) == ["0", "False", "False"]


def test_a_shared_object_is_read_without_pyelftools(tmp_path: Path, data_dir: Path) -> None:
    shutil.copy(data_dir / "multi.so", tmp_path / "libmulti.so")
    assert _child(tmp_path) == ["1", "True", "False"]  # ELF headers by struct: no pyelftools
