"""Raw samples -> statistics per (backend, mode, size) -> the recommended table values.

Statistics: per repeat, the max over ranks (a collective is as slow as its slowest rank);
then the median over repeats, and the spread as the interquartile range over the median.
Bandwidth as nccl-tests defines it: algbw = bytes / time (GB = 1e9 B), busbw = algbw * 2(n-1)/n.

Recommendation per world size: engines use symmetric memory while `size < max_size`, running
two-shot (or multimem for the world sizes in their multimem list). The path timed for that is
`two_shot_copy` (copy in, two-shot, copy out, as SGLang and vLLM do) when measured, else
`two_shot`. Scanning up from the smallest size, a win is beating NCCL by `margin`, a loss is
losing by `margin` (or a wrong result), anything else a tie; the scan stops at the first loss.
The recommended value is the first measured size after the last win (engines test
`size < max_size`), or the largest size when symmetric memory won there (nothing beyond is
claimed).

The table value follows graph mode when it was measured. Decode, where the small messages are,
runs captured in CUDA graphs; eager small-message times are bound by host launch overhead
(NCCL's enqueue alone is 25-45 us per call on 2x H200, varying from run to run) and flipped the
eager threshold between 32 KiB and 16 MiB in two back-to-back runs, while the graph threshold
stayed put. At the sizes where the threshold falls, eager and graph times agree within a few
percent, so large eager prefill messages are decided correctly too. Eager-only runs use eager.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from capgap.tune import spec as S


@dataclass(frozen=True)
class Row:
    backend: str
    mode: str
    bytes: int
    median_us: float
    spread: float  # (p75 - p25) / median over repeats of the per-repeat max over ranks
    min_us: float
    max_us: float
    algbw_gbps: float
    busbw_gbps: float
    iters: int
    repeats: int
    ok: bool  # correctness against NCCL (True for NCCL itself)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _quantile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarise(raw: dict[str, Any]) -> list[Row]:
    world = int(raw["environment"]["world_size"])
    ok = {(c["backend"], c["bytes"]): bool(c["ok"]) for c in raw.get("checks", [])}
    rows = []
    for cell in raw["cells"]:
        if "samples_us" not in cell:
            continue
        per_rank = cell["samples_us"]
        per_repeat = sorted(max(rank[i] for rank in per_rank) for i in range(len(per_rank[0])))
        median = statistics.median(per_repeat)
        algbw = cell["bytes"] / (median * 1e-6) / 1e9
        rows.append(
            Row(
                backend=cell["backend"],
                mode=cell["mode"],
                bytes=cell["bytes"],
                median_us=median,
                spread=(_quantile(per_repeat, 0.75) - _quantile(per_repeat, 0.25)) / median,
                min_us=per_repeat[0],
                max_us=per_repeat[-1],
                algbw_gbps=algbw,
                busbw_gbps=algbw * 2 * (world - 1) / world if world > 1 else algbw,
                iters=int(cell.get("iters", 0)),
                repeats=len(per_repeat),
                ok=ok.get((cell["backend"], cell["bytes"]), False),
            )
        )
    return rows


def skipped(raw: dict[str, Any]) -> dict[str, str]:
    """backend/mode -> the first reason it was not measured."""
    out: dict[str, str] = {}
    for cell in raw["cells"]:
        if "skipped" in cell:
            out.setdefault(f"{cell['backend']}/{cell['mode']}", cell["skipped"])
    return out


def _table(rows: list[Row], mode: str) -> dict[str, dict[int, Row]]:
    table: dict[str, dict[int, Row]] = {}
    for row in rows:
        if row.mode == mode:
            table.setdefault(row.backend, {})[row.bytes] = row
    return table


def _wins(fast: dict[int, Row], slow: dict[int, Row], margin: float) -> tuple[int | None, int | None]:
    """(last size won, first size lost), scanning up from the smallest size both measured.

    A win: a correct result and fast * (1 + margin) <= slow. A loss: a wrong result or
    slow * (1 + margin) <= fast. Anything between is a tie, which neither raises nor ends the run:
    a near-tie at the smallest sizes must not switch symmetric memory off for every size.
    """
    last_win = first_loss = None
    for size in sorted(set(fast) & set(slow)):
        f, s = fast[size], slow[size]
        if not f.ok or s.median_us * (1.0 + margin) <= f.median_us:
            first_loss = size
            break
        if f.median_us * (1.0 + margin) <= s.median_us:
            last_win = size
    return last_win, first_loss


def _next_size(sizes: list[int], after: int) -> int:
    bigger = [s for s in sizes if s > after]
    return bigger[0] if bigger else after


def engine_symm_backend(table: dict[str, dict[int, Row]]) -> str | None:
    for backend in (S.TWO_SHOT_COPY, S.TWO_SHOT):
        if table.get(backend):
            return backend
    return None


def mode_summary(rows: list[Row], mode: str, margin: float) -> dict[str, Any] | None:
    table = _table(rows, mode)
    nccl, path = table.get(S.NCCL), engine_symm_backend(table)
    if not nccl or path is None:
        return None
    last_win, first_loss = _wins(table[path], nccl, margin)
    sizes = sorted(set(table[path]) & set(nccl))
    # engines test `size < max_size`: the first measured size past the last win; 0 when it never won
    max_size = 0 if last_win is None else _next_size(sizes, last_win)
    summary: dict[str, Any] = {
        "symm_backend": path,
        "max_size_bytes": max_size,
        "last_win_bytes": last_win,
        "first_loss_bytes": first_loss,
        "won_up_to_largest_size": last_win == sizes[-1],
    }
    if path == S.TWO_SHOT_COPY and table.get(S.TWO_SHOT):  # the op alone, for an engine without the copies
        op_win, op_loss = _wins(table[S.TWO_SHOT], nccl, margin)
        summary["two_shot_without_copies"] = {"last_win_bytes": op_win, "first_loss_bytes": op_loss}
    if table.get(S.ONE_SHOT) and table.get(S.TWO_SHOT):
        one_win, one_loss = _wins(table[S.ONE_SHOT], table[S.TWO_SHOT], margin)
        summary["one_shot_beats_two_shot_until_bytes"] = one_win
        summary["two_shot_from_bytes"] = one_loss if one_win is not None else min(table[S.TWO_SHOT])
    if table.get(S.MULTIMEM) and table.get(S.TWO_SHOT):
        mm_win, _ = _wins(table[S.MULTIMEM], table[S.TWO_SHOT], margin)
        summary["multimem_beats_two_shot"] = mm_win is not None and mm_win >= (last_win or 0)
    best = max((r for b in table.values() for r in b.values() if r.ok), key=lambda r: r.busbw_gbps)
    summary["best_busbw"] = {
        "backend": best.backend,
        "bytes": best.bytes,
        "busbw_gbps": round(best.busbw_gbps, 1),
    }
    summary["worst_spread"] = round(max(r.spread for b in table.values() for r in b.values()), 4)
    return summary


def failed_checks(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in raw.get("checks", []) if not c["ok"]]
