"""`capgap tune allreduce`, as a library call: sweep -> statistics -> values, plot, files."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capgap.errors import UsageError
from capgap.tune import recommend
from capgap.tune.link import closeness, link_limit
from capgap.tune.recommend import Row
from capgap.tune.spec import MULTIMEM, SweepSpec
from capgap.tune.values import build_values, no_values

OUTPUT_FILES = ("values.json", "summary.json", "raw.json", "allreduce.png", "worker.log")


@dataclass
class TuneResult:
    out_dir: Path
    raw: dict[str, Any]
    rows: list[Row]
    values: dict[str, Any]
    files: dict[str, Path] = field(default_factory=dict)
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    other_node: Any = None  # launch.OtherNode: this node ran ranks, rank 0's node has the results

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return recommend.failed_checks(self.raw)


def prepare_out_dir(out: Path | None) -> Path:
    """The output directory; earlier results in it move to previous-<time>/ (never overwritten)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = out or Path(f"capgap-tune-allreduce-{stamp}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    _made_dirs.clear()
    _made_dirs.extend(p for p in (out, *out.parents) if not p.exists())
    old = [out / name for name in OUTPUT_FILES if (out / name).exists()]
    if old:
        backup = out / f"previous-{stamp}"
        backup.mkdir(parents=True, exist_ok=True)
        for path in old:
            path.replace(backup / path.name)
    out.mkdir(parents=True, exist_ok=True)
    return out


_made_dirs: list[Path] = []  # the directories prepare_out_dir made (the innermost first)


def remove_if_empty(out_dir: Path) -> None:
    """After a failed or remote run: take away the directories this run made, if still empty."""
    for path in _made_dirs:
        try:
            path.rmdir()
        except OSError:  # not empty (worker.log says why the run failed), or not ours
            return


def plot_or_note(rows: list[Row], values: dict[str, Any], path: Path, title: str) -> Path | str:
    """The PNG, or without matplotlib (the optional `plot` extra) a line saying how to get it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return (
            f"{path.name} not drawn: matplotlib is not installed (pip install 'capgap[plot]'; the "
            "numbers are all in summary.json and raw.json)"
        )
    from capgap.tune.plot import plot

    return plot(rows, values, path, title)


def analyse(raw: dict[str, Any], margin: float) -> tuple[list[Row], dict[str, Any]]:
    """Statistics and the values dict from raw samples alone (what the tests feed synthetically)."""
    rows = recommend.summarise(raw)
    env = raw["environment"]
    spec = raw["spec"]
    modes = {m: s for m in spec["modes"] if (s := recommend.mode_summary(rows, m, margin)) is not None}
    measured: dict[str, Any] = {
        "gpu": env.get("gpu"),
        "torch": env.get("torch"),
        "nccl": env.get("nccl"),
        "dist_backend": env.get("dist_backend"),
        "dtype": spec["dtype"],
        "sizes": [min(spec["sizes"]), max(spec["sizes"])],
        "multicast_ptr": env.get("multicast_ptr"),
        "modes": modes,
        "not_measured": recommend.skipped(raw),
    }
    if not any(r.backend == MULTIMEM for r in rows):
        measured["multimem"] = next(
            (why for name, why in measured["not_measured"].items() if name.startswith(MULTIMEM)),
            "not run: NVLink multicast is off (pass --allow-multicast where the probe reports support)",
        )
    ok_rows = [r for r in rows if r.ok]
    if ok_rows:
        best = max(ok_rows, key=lambda r: r.busbw_gbps)
        measured["link"] = closeness(link_limit(env), best.busbw_gbps)
        measured["link"]["best"] = f"{best.backend} ({best.mode}) at {best.bytes} bytes"
        measured["worst_spread"] = round(max(r.spread for r in rows), 4)
        measured["median_spread"] = round(sorted(r.spread for r in rows)[len(rows) // 2], 4)
    cc = env.get("cc")
    if not modes or not cc:  # nothing to recommend (CPU run, or NCCL only): say why in the file
        if not cc:
            ran = f"{env.get('dist_backend')} on {spec.get('device', 'cpu')}"
            why = f"no GPU was measured ({ran}): a check of the setup"
        else:
            why = "only NCCL was measured (no symmetric-memory backend ran; see measured.not_measured)"
        world = int(env["world_size"])
        return rows, no_values(world_size=world, margin=margin, reason=why, measured=measured)
    decisive = "graph" if "graph" in modes else next(iter(modes))  # why graph: recommend.py
    measured["decided_by"] = decisive
    chosen = modes[decisive]
    values = build_values(
        cc=cc,
        world_size=int(env["world_size"]),
        max_size=chosen["max_size_bytes"],
        multimem=bool(chosen.get("multimem_beats_two_shot")),
        margin=margin,
        measured=measured,
    )
    return rows, values


def tune_allreduce(
    spec: SweepSpec,
    nproc: int,
    out: Path | None,
    margin: float,
    torchrun_args: list[str],
    allow_multicast: bool = False,
) -> TuneResult:
    from capgap.tune.launch import OtherNode, multicast_supported, run_sweep

    if not 0.0 <= margin < 1.0:
        raise UsageError(f"--margin {margin} must be in [0, 1): a fraction such as 0.05")
    notes: list[str] = []
    multicast = False
    if allow_multicast:
        multicast, why = multicast_supported()
        notes.append(f"multicast {'allowed' if multicast else 'stays off'}: {why}")
    backends = [b for b in spec.backends if b != MULTIMEM] + ([MULTIMEM] if multicast else [])
    if tuple(backends) != spec.backends:
        spec = SweepSpec.from_json({**spec.to_json(), "backends": backends})
    out_dir = prepare_out_dir(out)
    from capgap import output

    nodes = any(a.startswith(("--nnodes", "--node-rank", "--node_rank")) for a in torchrun_args)
    where = f"{out_dir} on the node that holds rank 0" if nodes else str(out_dir)
    output.info(
        f"measuring all-reduce: {len(spec.sizes)} sizes x {len(spec.backends)} backends x "
        f"{len(spec.modes)} modes on {nproc} processes per node, results in {where}"
    )
    started = time.monotonic()
    try:
        raw, _log = run_sweep(spec, nproc, out_dir, torchrun_args, multicast=multicast)
    except BaseException:
        remove_if_empty(out_dir)
        raise
    wall = time.monotonic() - started
    if isinstance(raw, OtherNode):  # the node holding rank 0 writes the results, not this one
        (out_dir / "worker.log").unlink(missing_ok=True)
        remove_if_empty(out_dir)
        return TuneResult(out_dir, {}, [], {}, {}, wall, notes, other_node=raw)
    rows, values = analyse(raw, margin)
    world = int(raw["environment"]["world_size"])
    if world > nproc:
        notes.append(
            f"this node holds rank 0 of a world of {world} ({nproc} process(es) here): it wrote the results"
        )
    values.setdefault("measured", {})["sweep_wall_s"] = round(wall, 1)
    files = {"raw": out_dir / "raw.json", "log": out_dir / "worker.log"}
    files["values"] = out_dir / "values.json"
    files["values"].write_text(json.dumps(values, indent=1) + "\n")
    files["summary"] = out_dir / "summary.json"
    files["summary"].write_text(json.dumps([r.to_json() for r in rows], indent=0) + "\n")
    if rows:
        env = raw["environment"]
        who = env.get("gpu") or env["dist_backend"]
        title = f"all-reduce {spec.dtype}, {env['world_size']} x {who}, torch {env['torch']}" + (
            f", NCCL {env['nccl']}" if env.get("nccl") else ""
        )
        drawn = plot_or_note(rows, values, out_dir / "allreduce.png", title)
        if isinstance(drawn, Path):
            files["plot"] = drawn
        else:
            notes.append(drawn)
    return TuneResult(out_dir, raw, rows, values, files, wall, notes)
