"""Presentation of a tune result: text tables on stdout, or one JSON object."""

from __future__ import annotations

from typing import Any

from capgap import output
from capgap.tune.allreduce import TuneResult
from capgap.tune.spec import format_size
from capgap.tune.values import MAX_SIZES_SYMBOL

SPREAD_WARN = 0.10  # like torch.utils.benchmark: say so when repeats disagree by more than this


def other_node_line(result: TuneResult) -> str:
    node = result.other_node
    ranks = ", ".join(map(str, node.ranks))
    return (
        f"node rank {node.node_rank}: measured with rank(s) {ranks} of a world of {node.world_size}; "
        f"the results (values.json, summary.json, raw.json) are written by the node holding rank 0 "
        f"(rendezvous {node.rank0_at}), in the --out directory given there"
    )


def render_other_node(result: TuneResult) -> None:
    output.show(other_node_line(result))


def to_json(result: TuneResult) -> dict[str, Any]:
    if result.other_node is not None:
        return {"other_node": vars(result.other_node), "message": other_node_line(result)}
    return {
        "values": result.values,
        "files": {k: str(v) for k, v in result.files.items()},
        "rows": [r.to_json() for r in result.rows],
        "failed_checks": result.failed_checks,
        "notes": result.notes,
        "wall_s": round(result.wall_s, 1),
    }


def render_text(result: TuneResult) -> None:
    rows = result.rows
    env = result.raw["environment"]
    nccl_name = "nccl" if env.get("dist_backend") == "nccl" else str(env.get("dist_backend"))
    for mode in sorted({r.mode for r in rows}):
        _mode_table(result, mode, nccl_name)
    measured = result.values.get("measured", {})
    for mode, s in measured.get("modes", {}).items():
        switch = s.get("one_shot_beats_two_shot_until_bytes")
        output.show(
            f"{mode}: {s['symm_backend']} beats NCCL (margin {result.values.get('margin', 0):.0%}) up to "
            f"{_size(s['last_win_bytes'])}, first loss at {_size(s['first_loss_bytes'])} -> max_size "
            f"{_size(s['max_size_bytes'])}; one-shot beats two-shot up to {_size(switch)}"
        )
        if "two_shot_without_copies" in s:
            bare = s["two_shot_without_copies"]
            output.show(
                f"{mode}: two-shot alone (no copies in and out) beats NCCL up to "
                f"{_size(bare['last_win_bytes'])}, first loss at {_size(bare['first_loss_bytes'])}"
            )
    tables = result.values.get("tables", {}).get(MAX_SIZES_SYMBOL)
    if tables:
        decided = measured.get("decided_by")
        for arch, per_ws in tables.items():
            for ws, nbytes in per_ws.items():
                output.show(
                    f"recommended {MAX_SIZES_SYMBOL}[{arch}][{ws}] = {nbytes} ({_size(nbytes)}; "
                    f"decided by {decided} mode)"
                )
        for arch, sizes in result.values["multimem_world_sizes"].items():
            output.show(
                f"recommended multimem world sizes[{arch}] = {sizes} (of measured world size "
                f"{result.values['world_size']}; multimem: {measured.get('multimem', 'measured')})"
            )
    link = measured.get("link", {})
    if "fraction_of_limit" in link:
        output.show(
            f"link: {link['links']} x {link['link']} at {link['per_link_gbps']:g} GB/s each way = "
            f"{link['limit_gbps']:.0f} GB/s ({link['source']}); best busbw "
            f"{link['best_busbw_gbps']} GB/s, {link['best']}: "
            f"{link['fraction_of_limit']:.0%} of the limit"
        )
    elif link:
        output.show(f"link limit: {link.get('note')}; best busbw {link.get('best_busbw_gbps')} GB/s")
    for name, reason in measured.get("not_measured", {}).items():
        output.show(f"not measured: {name}: {reason}")
    noisy = [r for r in rows if r.spread > SPREAD_WARN]
    if noisy:
        worst = max(noisy, key=lambda r: r.spread)
        output.warn(
            f"{len(noisy)} of {len(rows)} cells spread more than {SPREAD_WARN:.0%} between repeats "
            f"(worst {worst.spread:.0%}: {worst.backend} {worst.mode} {format_size(worst.bytes)})"
        )
    for check in result.failed_checks:
        output.error(
            f"{check['backend']} at {format_size(check['bytes'])} differs from NCCL "
            f"(max abs error {check['max_abs_err']:.3g})"
        )
    from rich.markup import escape

    for note in result.notes:
        output.info(escape(note))
    output.show(f"sweep {result.wall_s:.1f} s; wrote " + ", ".join(str(p) for p in result.files.values()))


def _mode_table(result: TuneResult, mode: str, nccl_name: str) -> None:
    rows = [r for r in result.rows if r.mode == mode]
    env = result.raw["environment"]
    backends = sorted({r.backend for r in rows})
    cells = {(r.backend, r.bytes): r for r in rows}
    table_rows = []
    for size in sorted({r.bytes for r in rows}):
        line: list[Any] = [format_size(size)]
        for backend in backends:
            r = cells.get((backend, size))
            line.append("" if r is None else f"{_us(r.median_us)}{'' if r.ok else ' WRONG'}")
        best = max((r for r in rows if r.bytes == size and r.ok), key=lambda r: r.busbw_gbps, default=None)
        line.append("" if best is None else f"{best.busbw_gbps:.0f}")
        table_rows.append(line)
    title = (
        f"{mode}: all-reduce us per op, {env['world_size']} ranks, {env.get('gpu') or nccl_name} "
        f"(max over ranks, median of repeats)"
    )
    names = [nccl_name if b == "nccl" else b for b in backends]
    output.table(title, ["size", *names, "best busbw GB/s"], table_rows)


def _us(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _size(nbytes: int | None) -> str:
    if nbytes is None:
        return "none"
    return format_size(nbytes) if nbytes else "0 (never)"
