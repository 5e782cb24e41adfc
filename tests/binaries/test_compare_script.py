"""benchmarks/device/compare_cuobjdump.py end to end on the committed fixtures (needs cuobjdump)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from .conftest import REPO


def test_compare_script_writes_agreement_tables_and_listings(
    data_dir: Path, tmp_path: Path, cuobjdump: str
) -> None:
    env = dict(os.environ)
    env["PATH"] = str(Path(cuobjdump).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO / "src")
    out = tmp_path / "out"
    script = REPO / "benchmarks" / "device" / "compare_cuobjdump.py"
    proc = subprocess.run(
        [sys.executable, str(script), str(out), "--dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "agreement.json").read_text())
    libs = {r["library"]: r for r in report["libraries"]}
    committed = ["compressed.so", "multi.so", "ptx_af.fatbin", "ptx_only.so", "sm120a.cubin", "torch_ops.so"]
    assert sorted(libs) == committed
    assert all(r["compared"] and r["agreement"]["agree"] for r in libs.values())
    assert libs["multi.so"]["cuobjdump_images"] == libs["multi.so"]["capgap_images"] == 9
    assert libs["sm120a.cubin"]["capgap_verdict_9.0"]["status"] == "missing"
    assert "6 of 6 libraries agree arch by arch" in (out / "agreement.md").read_text()
    with tarfile.open(out / "cuobjdump_listings.tar.gz") as tar:
        names = sorted(tar.getnames())
        listing = tar.extractfile("multi.so.cuobjdump.txt").read().decode()  # type: ignore[union-attr]
    assert names == sorted(f"{n}.cuobjdump.txt" for n in libs)
    assert listing == (data_dir / "multi.so.cuobjdump.txt").read_text()
