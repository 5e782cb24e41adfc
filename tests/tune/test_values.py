from __future__ import annotations

import json

import pytest

from capgap.errors import UsageError
from capgap.tune.values import build_values, load_values


def test_values_round_trip_with_int_world_sizes_and_bytes(tmp_path):
    values = build_values(
        cc="12.0",
        world_size=8,
        max_size=1 << 25,
        multimem=False,
        margin=0.05,
        measured={"gpu": "RTX PRO 6000"},
    )
    path = tmp_path / "values.json"
    path.write_text(json.dumps(values))
    loaded = load_values(path)
    assert loaded["tables"] == {"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"12": {8: 1 << 25}}}
    assert loaded["multimem_world_sizes"] == {"12": []}
    assert loaded["arch"] == "12.0"
    assert loaded["world_size"] == 8
    assert loaded["measured"] == {"gpu": "RTX PRO 6000"}


def test_multimem_lists_the_measured_world_size_when_it_won(tmp_path):
    values = build_values(cc="9.0", world_size=4, max_size=0, multimem=True, margin=0.1, measured={})
    path = tmp_path / "v.json"
    path.write_text(json.dumps(values))
    assert load_values(path)["multimem_world_sizes"] == {"9": [4]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "cannot read tune values"),
        ('{"format": "something else"}', "is not a capgap tune values file"),
        ('{"format": "capgap.tune.values/1", "tables": {}}', "malformed tune values"),
        (
            '{"format": "capgap.tune.values/1", "tables": {"T": {"9": {"two": 1}}}, '
            '"multimem_world_sizes": {}, "world_size": 2}',
            "malformed tune values",
        ),
        (
            '{"format": "capgap.tune.values/1", "tables": {"T": {"9": {"2": -1}}}, '
            '"multimem_world_sizes": {}, "world_size": 2}',
            "negative",
        ),
    ],
)
def test_bad_values_files_are_usage_errors(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_values(path)


def test_missing_values_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_values(tmp_path / "absent.json")


def test_what_a_gpu_run_writes_is_what_fix_applies(tmp_path):
    """Round trip: `analyse` is what tune_allreduce writes values.json from; fix reads that file."""
    from capgap.tune.allreduce import analyse
    from tests.cli_runner import run_cli
    from tests.patches.helpers import commit_all, git, write
    from tests.semantic.test_fix_cli import USE
    from tests.semantic.test_fix_upgrade import COMM
    from tests.tune.synthetic import make_raw

    sizes = [1 << 10, 1 << 20, 1 << 24]
    raw = make_raw(
        {
            ("nccl", "eager"): dict.fromkeys(sizes, 10.0),
            ("two_shot_copy", "eager"): dict.fromkeys(sizes, 5.0),
        },
        cc="12.0",
    )
    _, values = analyse(raw, 0.05)
    path = tmp_path / "values.json"
    path.write_text(json.dumps(values, indent=1) + "\n")  # as tune_allreduce writes it
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    write(work, {"engine/comm.py": COMM + USE})
    commit_all(work, "v1")
    res = run_cli(
        "fix",
        str(work),
        "-a",
        "12.0",
        "--values",
        str(path),
        "--store",
        str(tmp_path / "s"),
        "--device",
        "RTX PRO 6000",
        "--format",
        "json",
    )
    assert res.code == 0, res.err
    origins = [(e["symbol"], e["origin"]) for e in json.loads(res.out)["entries"]]
    assert origins == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "measured"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "partly-measured"),
    ]
