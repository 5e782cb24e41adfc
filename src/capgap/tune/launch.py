"""Start the worker under torchrun and hand back its raw samples.

`python -m torch.distributed.run --nproc-per-node N [torchrun options] -m capgap.tune.worker`,
with capgap's own source directory on PYTHONPATH (so an uninstalled checkout works) and the
three NVLink-multicast switches forced off in the child environment unless the user opted in
AND the probe says this machine supports multicast.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capgap.errors import EnvironmentProblem, UsageError
from capgap.tune.spec import SweepSpec
from capgap.tune.worker import ALLOW_MULTICAST_ENV, MULTICAST_OFF

# torchrun options that describe the rendezvous themselves; without any, we add --standalone
# (a free local port, so two runs or a test never collide on 29500).
_RDZV_OPTIONS = ("--nnodes", "--node-rank", "--node_rank", "--rdzv", "--master", "--standalone")


def torchrun_command(nproc: int, spec_path: Path, raw_path: Path, torchrun_args: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={nproc}"]
    if not any(a.startswith(_RDZV_OPTIONS) for a in torchrun_args):
        cmd.append("--standalone")
    cmd += list(torchrun_args)
    cmd += ["-m", "capgap.tune.worker", "--spec", str(spec_path), "--out", str(raw_path)]
    return cmd


def child_environment(base: Mapping[str, str], multicast: bool) -> dict[str, str]:
    """The worker's environment: capgap importable; multicast off unless `multicast` is True."""
    env = dict(base)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.pop(ALLOW_MULTICAST_ENV, None)
    if multicast:
        env[ALLOW_MULTICAST_ENV] = "1"
    else:
        env.update(MULTICAST_OFF)
    return env


def multicast_supported() -> tuple[bool, str]:
    """Ask the probe whether every GPU here supports NVLink multicast; unknown counts as no."""
    try:
        from capgap.probe.gpus import probe_machine  # written by the probe issue; optional here
    except ImportError:
        return False, "capgap.probe is not available, so multicast support is unknown"
    try:
        machine = probe_machine()
    except Exception as exc:  # a probe failure must not turn multicast on
        return False, f"the probe failed ({exc})"
    gpus = getattr(machine, "gpus", None) or (machine.get("gpus") if isinstance(machine, dict) else None)
    flags = [_get(g, "multicast_supported", _get(g, "multicast", None)) for g in gpus or []]
    if flags and all(f is True for f in flags):
        return True, "the probe reports multicast support on every GPU"
    return False, "the probe does not report multicast support on every GPU"


def _get(obj: Any, name: str, default: Any) -> Any:
    return obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)


_ERROR_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.*)$", re.M)
_NO_CUDA = re.compile(r"_cuda_|CUDA|NVIDIA driver|no kernel image|libcuda|nvml", re.I)
CPU_MODE = "--dist-backend gloo --device cpu"


def failure_cause(log: str) -> str | None:
    """The exception a worker died of (the first one in the log, not torchrun's own), one line;
    with a pointer to the CPU mode when it is about CUDA (a CPU-only torch, no GPU, no driver)."""
    for match in _ERROR_LINE.finditer(log):
        name, message = match.group(1), match.group(2).strip()
        if name in {"ChildFailedError", "SignalException"}:
            continue
        cause = f"{name}: {message}"
        if _NO_CUDA.search(cause):
            cause += (
                "; this torch or this machine has no usable CUDA GPU (the CPU mode "
                f"`{CPU_MODE}` checks the setup without GPUs)"
            )
        return cause
    return None


@dataclass(frozen=True)
class OtherNode:
    """What a node that does not hold rank 0 did: its worker wrote this, rank 0's node the results."""

    node_rank: int
    ranks: list[int]
    world_size: int
    rank0_at: str  # MASTER_ADDR:MASTER_PORT as torchrun set it


def run_sweep(
    spec: SweepSpec,
    nproc: int,
    out_dir: Path,
    torchrun_args: list[str],
    multicast: bool = False,
    timeout_s: float | None = None,
) -> tuple[dict[str, Any] | OtherNode, str]:
    """Run the sweep; return (raw samples dict, or OtherNode on a node without rank 0, the
    child's combined output)."""
    if nproc < 1:
        raise UsageError("--nproc must be at least 1")
    if importlib.util.find_spec("torch") is None:
        raise EnvironmentProblem("torch is not installed in this Python; `capgap tune` needs it")
    out_dir.mkdir(parents=True, exist_ok=True)
    spec_path, raw_path = out_dir / "spec.json", out_dir / "raw.json"
    spec_path.write_text(json.dumps(spec.to_json(), indent=1))
    if raw_path.exists():
        raw_path.unlink()
    cmd = torchrun_command(nproc, spec_path, raw_path, torchrun_args)
    try:
        proc = subprocess.run(
            cmd,
            env=child_environment(os.environ, multicast),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentProblem(f"the sweep ran past {timeout_s:.0f} s and was stopped") from exc
    log = (proc.stdout or "") + (proc.stderr or "")
    (out_dir / "worker.log").write_text(log)
    node_path = Path(f"{raw_path}.node.json")
    spec_path.unlink()
    if proc.returncode == 0 and not raw_path.exists() and node_path.exists():
        node = json.loads(node_path.read_text())
        node_path.unlink()
        ranks, world = list(node["ranks"]), int(node["world_size"])
        return OtherNode(int(node["node_rank"]), ranks, world, str(node["rank0_at"])), log
    if proc.returncode != 0 or not raw_path.exists():
        cause = failure_cause(log)
        if cause is None:
            cause = " | ".join(line for line in log.strip().splitlines()[-6:])
        what = f"torchrun exited with {proc.returncode}" if proc.returncode else "no results were written"
        raise EnvironmentProblem(f"the sweep failed: {cause} ({what}; log: {out_dir / 'worker.log'})")
    return json.loads(raw_path.read_text()), log
