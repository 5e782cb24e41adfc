"""Presentation of a tune result: text tables on stdout, or one JSON object."""

from __future__ import annotations

from typing import Any

from capgap import output
from capgap.tune.allreduce import TuneResult
from capgap.tune.spec import format_size
from capgap.tune.values import MAX_SIZES_SYMBOL

SPREAD_WARN = 0.10  # like torch.utils.benchmark: say so when repeats disagree by more than this


def to_json(result: TuneResult) -> dict[str, Any]:
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
    columns = sorted({(r.backend, r.mode) for r in rows})
    cells = {(r.backend, r.mode, r.bytes): r for r in rows}
    table_rows = []
    for size in sorted({r.bytes for r in rows}):
        line: list[Any] = [format_size(size)]
        for backend, mode in columns:
            r = cells.get((backend, mode, size))
            line.append("" if r is None else f"{r.median_us:.1f}{'' if r.ok else ' WRONG'}")
        best = max((r for r in rows if r.bytes == size and r.ok), key=lambda r: r.busbw_gbps, default=None)
        line.append("" if best is None else f"{best.busbw_gbps:.0f} {best.backend}/{best.mode}")
        table_rows.append(line)
    title = (f"all-reduce, {env['world_size']} ranks, {env.get('gpu') or env['dist_backend']}, "
             f"us per op (max over ranks, median of repeats)")
    output.table(title, ["size", *(f"{b} {m}" for b, m in columns), "best busbw GB/s"], table_rows)
    measured = result.values.get("measured", {})
    for mode, s in measured.get("modes", {}).items():
        switch = s.get("one_shot_beats_two_shot_until_bytes")
        output.show(
            f"{mode}: {s['symm_backend']} beats NCCL (margin {result.values.get('margin', 0):.0%}) up to "
            f"{_size(s['last_win_bytes'])}, first loss at {_size(s['first_loss_bytes'])} -> max_size "
            f"{_size(s['max_size_bytes'])}; one-shot beats two-shot up to {_size(switch)}")
    tables = result.values.get("tables", {}).get(MAX_SIZES_SYMBOL)
    if tables:
        for arch, per_ws in tables.items():
            for ws, nbytes in per_ws.items():
                output.show(f"recommended {MAX_SIZES_SYMBOL}[{arch}][{ws}] = {nbytes} ({_size(nbytes)})")
        output.show(f"recommended multimem world sizes [{', '.join(result.values['multimem_world_sizes'])}]: "
                    f"{result.values['multimem_world_sizes']}")
    link = measured.get("link", {})
    if "fraction_of_limit" in link:
        output.show(f"link: {link['links']} x {link['link']} at {link['per_link_gbps']:g} GB/s each way = "
                    f"{link['limit_gbps']:.0f} GB/s ({link['source']}); best busbw "
                    f"{link['best_busbw_gbps']} GB/s, {link['best']}: "
                    f"{link['fraction_of_limit']:.0%} of the limit")
    elif link:
        output.show(f"link limit: {link.get('note')}; best busbw {link.get('best_busbw_gbps')} GB/s")
    for name, reason in measured.get("not_measured", {}).items():
        output.show(f"not measured: {name}: {reason}")
    noisy = [r for r in rows if r.spread > SPREAD_WARN]
    if noisy:
        worst = max(noisy, key=lambda r: r.spread)
        output.warn(f"{len(noisy)} of {len(rows)} cells spread more than {SPREAD_WARN:.0%} between repeats "
                    f"(worst {worst.spread:.0%}: {worst.backend} {worst.mode} {format_size(worst.bytes)})")
    for check in result.failed_checks:
        output.error(f"{check['backend']} at {format_size(check['bytes'])} differs from NCCL "
                     f"(max abs error {check['max_abs_err']:.3g})")
    for note in result.notes:
        output.info(note)
    output.show(f"sweep {result.wall_s:.1f} s; wrote " + ", ".join(str(p) for p in result.files.values()))


def _size(nbytes: int | None) -> str:
    return "never" if nbytes is None else format_size(nbytes) if nbytes else "0 (never)"
