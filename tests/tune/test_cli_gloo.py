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
    assert report["values"]["tables"] == {} and "no GPU was measured" in report["values"]["no_values"]
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


def test_the_cpu_modes_values_file_is_refused_by_fix_with_the_reason(gloo_run, tmp_path):
    """Round trip: what tune wrote is what fix reads; a CPU run measured nothing to apply, and
    fix says that in one line (a values file of a GPU run is applied: test_fix_cli, test_tune_fix)."""
    from tests.patches.helpers import commit_all, git, write

    _, out = gloo_run
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    write(work, {"engine/comm.py": "MAX = {9: 1}\n"})
    commit_all(work, "v1")
    res = run_cli(
        "fix", str(work), "-a", "12.0", "--values", str(out / "values.json"), "--store", str(tmp_path)
    )
    assert res.code == 2 and "Traceback" not in res.err
    assert "has no values for capgap fix to apply: no GPU was measured (gloo on cpu)" in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_without_a_gpu_the_cause_is_one_line_pointing_to_the_cpu_mode(tmp_path):
    """The CPU torch here has no CUDA: the default (nccl, cuda) run fails, and says why."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    out = tmp_path / "new" / "run"
    result = run_cli("tune", "allreduce", "--nproc", "2", "--sizes", "1K", "--out", str(out))
    assert result.code == 2
    [line] = result.err.strip().splitlines()[-1:]
    assert line.startswith("error: the sweep failed: ")
    assert "no usable CUDA GPU" in line and "--dist-backend gloo --device cpu" in line
    assert "worker.log" in line and (out / "worker.log").exists()  # the log stays, and says more
    assert sorted(p.name for p in out.iterdir()) == ["worker.log"]


def test_a_run_that_fails_before_measuring_leaves_no_directory(tmp_path, monkeypatch):
    out = tmp_path / "new" / "run"
    result = run_cli("tune", "allreduce", "--nproc", "0", "--out", str(out), *FAST)
    assert result.code == 2 and "--nproc must be at least 1" in result.err
    assert not (tmp_path / "new").exists()


def test_cpu_mode_is_in_the_help():
    result = run_cli("tune", "allreduce", "--help")
    assert "--dist-backend" in result.out and "gloo" in result.out and "--device" in result.out
