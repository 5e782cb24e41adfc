"""Two nodes (issue 15, item 14): two `capgap tune allreduce` processes on this machine join one
torchrun rendezvous over localhost (c10d, gloo on CPU), as two hosts would; each says what it
did, the node holding rank 0 writes the results, the other says where they are; both exit 0."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is not installed: the torchrun launch cannot be tested")

FAST = ("--dist-backend", "gloo", "--device", "cpu", "--repeats", "2", "--max-iters", "2")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_over_localhost(tmp_path: Path) -> None:
    port = _free_port()
    procs = []
    for node in (0, 1):
        cmd = [sys.executable, "-m", "capgap", "tune", "allreduce", "--nproc", "1", "--sizes", "1K"]
        cmd += [
            "--out",
            str(tmp_path / f"node{node}"),
            *FAST,
            "--",
            "--nnodes",
            "2",
            "--node-rank",
            str(node),
        ]
        cmd += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--max-restarts=0"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [(p, *p.communicate(timeout=300)) for p in procs]
    for proc, _out, err in results:
        assert proc.returncode == 0, err
        assert "on the node that holds rank 0" in err
    holders = [n for n in (0, 1) if (tmp_path / f"node{n}" / "values.json").exists()]
    assert len(holders) == 1  # c10d picks which node gets rank 0
    head, other = holders[0], 1 - holders[0]
    raw = json.loads((tmp_path / f"node{head}" / "raw.json").read_text())
    assert raw["environment"]["world_size"] == 2
    assert all(len(c["samples_us"]) == 2 for c in raw["cells"] if "samples_us" in c)  # both ranks
    assert (
        "this node holds rank 0 of a world of 2 (1 process(es) here): it wrote the results"
        in results[head][2]
    )
    [line] = results[other][1].splitlines()
    assert line.startswith("node rank ") and "measured with rank(s) 1 of a world of 2" in line
    assert "written by the node holding rank 0 (rendezvous " in line
    assert not (tmp_path / f"node{other}").exists()  # nothing left behind where nothing was written
