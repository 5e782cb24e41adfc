from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from capgap.tune.link import closeness, link_limit

SRC = Path(__file__).resolve().parents[2] / "src"


def test_link_limit_from_nvml_version_or_nvml_speed():
    assert link_limit({"nvlink": {"active_links": 18, "version": 6}}) == {
        "limit_gbps": 450.0,
        "links": 18,
        "per_link_gbps": 25.0,
        "link": "NVLink 4",
        "source": "NVLink 4 datasheet speed",
    }
    measured = link_limit({"nvlink": {"active_links": 4, "version": 7, "speed_mbps_per_link": 53125}})
    assert (measured["limit_gbps"], measured["source"]) == (212.5, "NVML per-link speed")
    limit = link_limit({"nvlink": {"active_links": 18, "version": 6}})
    assert closeness(limit, 315.0)["fraction_of_limit"] == 0.7


def test_no_limit_is_invented_without_nvlink_facts():
    assert "PCIe" in link_limit({"nvlink": {"active_links": 0, "version": None}})["note"]
    assert "unknown version" in link_limit({"nvlink": {"active_links": 2, "version": 99}})["note"]
    assert "NVML init failed" in link_limit({"nvlink": {"error": "NVML init failed: x"}})["note"]
    assert "note" in link_limit({})


def test_the_tune_path_imports_nothing_beyond_torch_numpy_typer_rich_matplotlib():
    code = (
        "import sys\n"
        "import capgap.commands.tune, capgap.tune.allreduce, capgap.tune.launch, capgap.tune.report\n"
        "import capgap.tune.values, capgap.tune.link, capgap.tune.worker, capgap.tune.spec\n"
        "bad = {'elftools', 'libcst', 'platformdirs', 'packaging', 'pynvml', 'torch', 'matplotlib'}\n"
        "print(sorted(bad & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"  # torch/matplotlib/pynvml load only where they are used
