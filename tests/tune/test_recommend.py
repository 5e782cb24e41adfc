from __future__ import annotations

import pytest

from capgap.tune.allreduce import analyse
from capgap.tune.recommend import mode_summary, summarise
from tests.tune.synthetic import make_raw

K, M = 1 << 10, 1 << 20


def _lat(**per_backend: dict[int, float]) -> dict[tuple[str, str], dict[int, float]]:
    return {(b, m): v for b, v in per_backend.items() for m in ("eager", "graph")}


def test_statistics_take_max_over_ranks_then_median_and_bus_bandwidth():
    raw = make_raw({("nccl", "eager"): {M: 100.0}}, world=4, repeats=5)
    (row,) = summarise(raw)
    # per repeat max over ranks: [110, 100, 100, 100, 100] -> median 100, IQR 0
    assert row.median_us == 100.0
    assert row.max_us == pytest.approx(110.0)
    assert row.min_us == 100.0
    assert row.spread == 0.0
    assert row.algbw_gbps == pytest.approx(M / 100e-6 / 1e9)
    assert row.busbw_gbps == pytest.approx(row.algbw_gbps * 2 * 3 / 4)
    assert row.ok is True


def test_spread_is_interquartile_range_over_median():
    raw = make_raw({("nccl", "eager"): {M: 100.0}}, world=2, repeats=2)
    (row,) = summarise(raw)
    # per-repeat maxima [110, 100]: median 105, p75 107.5, p25 102.5
    assert row.median_us == pytest.approx(105.0)
    assert row.spread == pytest.approx(5.0 / 105.0)


def test_threshold_is_first_size_after_the_last_win_and_ties_do_not_stop_the_scan():
    sizes = [K, 2 * K, 4 * K, 8 * K, 16 * K]
    nccl = dict(zip(sizes, [10.0, 10.0, 10.0, 10.0, 10.0], strict=True))
    # 1K tie (2% faster), 2K win, 4K tie, 8K loss (12% slower), 16K win again (ignored: after a loss)
    copy = dict(zip(sizes, [9.8, 8.0, 9.9, 11.2, 5.0], strict=True))
    raw = make_raw(_lat(nccl=nccl, two_shot_copy=copy, two_shot=copy))
    summary = mode_summary(summarise(raw), "graph", margin=0.05)
    assert summary["symm_backend"] == "two_shot_copy"
    assert summary["last_win_bytes"] == 2 * K
    assert summary["first_loss_bytes"] == 8 * K
    assert summary["max_size_bytes"] == 4 * K


def test_never_winning_gives_zero_and_winning_everywhere_gives_the_largest_size():
    sizes = [K, M]
    never = make_raw(_lat(nccl=dict.fromkeys(sizes, 10.0), two_shot=dict.fromkeys(sizes, 20.0)))
    assert mode_summary(summarise(never), "eager", 0.05)["max_size_bytes"] == 0
    always = make_raw(_lat(nccl=dict.fromkeys(sizes, 10.0), two_shot=dict.fromkeys(sizes, 5.0)))
    summary = mode_summary(summarise(always), "eager", 0.05)
    assert summary["max_size_bytes"] == M
    assert summary["won_up_to_largest_size"] is True


def test_a_wrong_result_counts_as_a_loss():
    sizes = [K, 2 * K, 4 * K]
    raw = make_raw(
        _lat(nccl=dict.fromkeys(sizes, 10.0), two_shot=dict.fromkeys(sizes, 5.0)), wrong={("two_shot", 4 * K)}
    )
    summary = mode_summary(summarise(raw), "eager", 0.05)
    found = (summary["last_win_bytes"], summary["first_loss_bytes"], summary["max_size_bytes"])
    assert found == (2 * K, 4 * K, 4 * K)


def test_margin_decides_a_close_race():
    raw = make_raw(_lat(nccl={K: 10.0, M: 10.0}, two_shot={K: 9.0, M: 9.0}))
    assert mode_summary(summarise(raw), "eager", 0.05)["max_size_bytes"] == M
    assert mode_summary(summarise(raw), "eager", 0.20)["max_size_bytes"] == 0


def test_one_shot_switch_point_and_copy_free_two_shot_are_reported():
    sizes = [K, 2 * K, 4 * K]
    raw = make_raw(
        _lat(
            nccl=dict.fromkeys(sizes, 40.0),
            one_shot={K: 5.0, 2 * K: 12.0, 4 * K: 20.0},
            two_shot=dict.fromkeys(sizes, 9.0),
            two_shot_copy={K: 30.0, 2 * K: 30.0, 4 * K: 50.0},
        )
    )
    summary = mode_summary(summarise(raw), "graph", 0.05)
    assert summary["one_shot_beats_two_shot_until_bytes"] == K
    assert summary["two_shot_from_bytes"] == 2 * K
    assert summary["two_shot_without_copies"] == {"last_win_bytes": 4 * K, "first_loss_bytes": None}
    assert summary["max_size_bytes"] == 4 * K  # copy path: won 1K, 2K, lost 4K


def test_values_follow_graph_mode_and_no_multimem_without_measurement():
    sizes = [K, 2 * K, 4 * K]
    lat = {
        ("nccl", "eager"): dict.fromkeys(sizes, 40.0),
        ("nccl", "graph"): dict.fromkeys(sizes, 10.0),
        ("two_shot", "eager"): dict.fromkeys(sizes, 9.0),
        ("two_shot", "graph"): {K: 7.0, 2 * K: 12.0, 4 * K: 7.0},
    }
    nvlink = {"active_links": 18, "version": 6}
    _, values = analyse(make_raw(lat, nvlink=nvlink, skipped={("multimem", "eager"): "multicast off"}), 0.05)
    assert values["tables"] == {"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"9": {"2": 2 * K}}}
    assert values["multimem_world_sizes"] == {"9": []}
    assert values["measured"]["modes"]["eager"]["max_size_bytes"] == 4 * K
    assert values["measured"]["modes"]["graph"]["max_size_bytes"] == 2 * K
    assert values["measured"]["decided_by"] == "graph"
    assert values["measured"]["not_measured"] == {"multimem/eager": "multicast off"}
    link = values["measured"]["link"]
    assert link["limit_gbps"] == 450.0
    best = 4 * K / 7e-6 / 1e9  # two_shot graph at 4K
    assert link["best_busbw_gbps"] == round(best, 1)
    assert link["fraction_of_limit"] == round(best / 450.0, 3)


def test_an_eager_only_run_decides_by_eager():
    lat = {("nccl", "eager"): {K: 40.0, 2 * K: 40.0}, ("two_shot", "eager"): {K: 9.0, 2 * K: 9.0}}
    _, values = analyse(make_raw(lat), 0.05)
    assert values["tables"]["TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES"] == {"9": {"2": 2 * K}}
    assert values["measured"]["decided_by"] == "eager"


def test_nothing_is_recommended_from_a_cpu_run():
    _, values = analyse(make_raw({("nccl", "eager"): {K: 500.0}}, cc=None), 0.05)
    assert (values["tables"], values["multimem_world_sizes"], values["arch"]) == ({}, {}, None)
    assert values["no_values"].startswith("no GPU was measured")
    assert values["measured"]["link"]["note"].startswith("no GPU link information")
