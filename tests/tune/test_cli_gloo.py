"""The real torchrun launch, on CPU with the gloo backend: the same orchestration as on GPUs."""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import run_cli

pytest.importorskip("torch", reason="torch is not installed: the torchrun launch cannot be tested")

FAST = ("--dist-backend", "gloo", "--device", "cpu", "--repeats", "2", "--max-iters", "2")


@pytest.fixture(scope="module")
def gloo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tune") / "run"
    result = run_cli(
        "tune",
        "allreduce",
        "--nproc",
        "2",
        "--sizes",
        "1K,4K",
        "--mode",
        "both",
        "--out",
        str(out),
        "--format",
        "json",
        *FAST,
        "--",
        "--max-restarts=0",
    )
    return result, out


def test_gloo_launch_measures_both_ranks_and_records_why_the_rest_was_skipped(gloo_run):
    result, out = gloo_run
    assert result.code == 0, result.err
    report = json.loads(result.out)
    raw = json.loads((out / "raw.json").read_text())
    assert raw["environment"]["world_size"] == 2
    assert raw["environment"]["dist_backend"] == "gloo"
    for key, value in {
        "NCCL_NVLS_ENABLE": "0",
        "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
        "NVSHMEM_DISABLE_NVLS": "1",
    }.items():
        assert raw["environment"]["env"][key] == value
    measured = [c for c in raw["cells"] if "samples_us" in c]
    assert sorted((c["backend"], c["mode"], c["bytes"]) for c in measured) == [
        ("nccl", "eager", 1024),
        ("nccl", "eager", 4096),
    ]
    for cell in measured:
        assert len(cell["samples_us"]) == 2 and all(len(r) == 2 for r in cell["samples_us"])
        assert all(s > 0 for r in cell["samples_us"] for s in r)
    skipped = report["values"]["measured"]["not_measured"]
    assert skipped["nccl/graph"] == "CUDA graphs need a GPU"
    assert skipped["two_shot/eager"].startswith("torch symmetric memory needs CUDA GPUs")
    assert "tables" not in report["values"]  # no GPU, no recommendation
    assert [r["bytes"] for r in report["rows"]] == [1024, 4096]
    assert (out / "allreduce.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "values.json").read_text()) == report["values"]


def test_a_second_run_keeps_the_first_runs_files_and_multicast_stays_off_unprobed(gloo_run, tmp_path):
    _, out = gloo_run
    first = (out / "raw.json").read_text()
    result = run_cli(
        "tune",
        "allreduce",
        "--nproc",
        "2",
        "--sizes",
        "1K",
        "--mode",
        "eager",
        "--out",
        str(out),
        "--allow-multicast",
        *FAST,
    )
    assert result.code == 0, result.err
    # asking is not enough: without the probe reporting support, multicast stays off in the children
    assert "multicast stays off" in result.err
    env = json.loads((out / "raw.json").read_text())["environment"]["env"]
    assert (env["NCCL_NVLS_ENABLE"], env["TORCH_SYMM_MEM_DISABLE_MULTICAST"]) == ("0", "1")
    (backup,) = [p for p in out.iterdir() if p.name.startswith("previous-")]
    assert (backup / "raw.json").read_text() == first
    assert result.out.startswith("eager: all-reduce us per op") and "┃ gloo ┃" in result.out
    assert "not measured: two_shot/eager" in result.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--sizes", "1Q"), "bad size"),
        (("--mode", "lazy"), "bad mode"),
        (("--margin", "2"), "--margin"),
        (("--dtype", "fp16"), "bad dtype"),
    ],
)
def test_bad_options_exit_2_with_one_line(args, message, tmp_path):
    result = run_cli("tune", "allreduce", "--nproc", "2", "--out", str(tmp_path / "o"), *FAST, *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err
