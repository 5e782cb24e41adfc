from __future__ import annotations

import pytest

from capgap.tune.allreduce import analyse
from tests.tune.synthetic import make_raw

pytest.importorskip("matplotlib", reason="matplotlib is not installed")

K = 1 << 10


def test_plot_writes_a_png_with_thresholds_and_link_limit(tmp_path):
    from capgap.tune.plot import plot

    sizes = [K, 2 * K, 4 * K, 8 * K]
    lat = {
        (b, m): dict(zip(sizes, v, strict=True))
        for b, v in (
            ("nccl", [40.0, 40, 40, 40]),
            ("two_shot", [10.0, 10, 30, 60]),
            ("one_shot", [12.0, 14, 40, 90]),
        )
        for m in ("eager", "graph")
    }
    rows, values = analyse(make_raw(lat, nvlink={"active_links": 18, "version": 6}), 0.05)
    assert values["measured"]["modes"]["graph"]["max_size_bytes"] == 8 * K  # won up to 4K, lost at 8K
    path = plot(rows, values, tmp_path / "sub" / "allreduce.png", "test")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # two panels, six lines, labels: far more than an empty figure
