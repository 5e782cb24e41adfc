from __future__ import annotations

import sys

import pytest

from capgap.errors import UsageError
from capgap.tune.launch import child_environment, torchrun_command
from capgap.tune.spec import SweepSpec, format_size, parse_size, parse_sizes
from capgap.tune.worker import MULTICAST_OFF, force_multicast_off, iters_for


def test_sizes_parse_binary_units_ranges_and_lists():
    assert parse_size("4K") == 4096
    assert parse_size("256MiB") == 256 << 20
    assert parse_size("100") == 100
    assert parse_sizes("1K:8K") == (1024, 2048, 4096, 8192)
    assert len(parse_sizes("1K:256M")) == 19
    assert parse_sizes("1M,4K,4K") == (4096, 1 << 20)
    assert format_size(256 << 20) == "256M"
    assert format_size(1536) == "1536B"


@pytest.mark.parametrize("text", ["", "1X", "8K:1K", "0:4K", "K", ","])
def test_bad_sizes_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_sizes(text)


def test_spec_round_trips_and_rejects_bad_fields():
    spec = SweepSpec(sizes=(1024, 2048), modes=("graph",))
    assert SweepSpec.from_json(spec.to_json()) == spec
    with pytest.raises(UsageError, match="dtype"):
        SweepSpec(sizes=(1024,), dtype="fp16")
    with pytest.raises(UsageError, match="multiple"):
        SweepSpec(sizes=(1023,))
    with pytest.raises(UsageError, match="backend"):
        SweepSpec(sizes=(1024,), backends=("custom_ar",))


def test_iterations_fill_the_target_time_within_bounds():
    assert iters_for(10.0, 2.0, 200) == 200
    assert iters_for(100.0, 2.0, 200) == 20
    assert iters_for(5000.0, 2.0, 200) == 1
    assert iters_for(float("nan"), 2.0, 50) == 50


def test_torchrun_command_adds_standalone_unless_a_rendezvous_is_given(tmp_path):
    cmd = torchrun_command(2, tmp_path / "s.json", tmp_path / "r.json", [])
    assert cmd[:5] == [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", "--standalone"]
    assert cmd[-6:] == [
        "-m",
        "capgap.tune.worker",
        "--spec",
        str(tmp_path / "s.json"),
        "--out",
        str(tmp_path / "r.json"),
    ]
    multi = torchrun_command(
        8, tmp_path / "s.json", tmp_path / "r.json", ["--nnodes=2", "--rdzv-endpoint=host:29400"]
    )
    assert "--standalone" not in multi
    assert multi[4:6] == ["--nnodes=2", "--rdzv-endpoint=host:29400"]


def test_child_environment_forces_multicast_off_over_the_users_settings():
    env = child_environment(
        {"NCCL_NVLS_ENABLE": "1", "CAPGAP_TUNE_ALLOW_MULTICAST": "1", "PYTHONPATH": "/x"}, multicast=False
    )
    assert {k: env[k] for k in MULTICAST_OFF} == MULTICAST_OFF
    assert "CAPGAP_TUNE_ALLOW_MULTICAST" not in env
    assert env["PYTHONPATH"].endswith("/x") and env["PYTHONPATH"].split(":")[0].endswith("src")
    allowed = child_environment({"NCCL_NVLS_ENABLE": "1"}, multicast=True)
    assert allowed["CAPGAP_TUNE_ALLOW_MULTICAST"] == "1"
    assert allowed["NCCL_NVLS_ENABLE"] == "1"


def test_worker_forces_multicast_off_unless_allowed():
    env = {"NCCL_NVLS_ENABLE": "1"}
    assert force_multicast_off(env) is True
    assert env == MULTICAST_OFF
    env = {"NCCL_NVLS_ENABLE": "1", "CAPGAP_TUNE_ALLOW_MULTICAST": "1"}
    assert force_multicast_off(env) is False
    assert env["NCCL_NVLS_ENABLE"] == "1"


def test_missing_torch_is_an_environment_error_exit_2(monkeypatch, tmp_path):
    from tests.cli_runner import run_cli

    monkeypatch.setattr("capgap.tune.launch.importlib.util.find_spec", lambda name: None)
    result = run_cli("tune", "allreduce", "--nproc", "2", "--out", str(tmp_path / "o"))
    assert result.code == 2
    assert "torch is not installed" in result.err
