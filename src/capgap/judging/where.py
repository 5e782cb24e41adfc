"""Where a finding sits: runtime code, or tests, benchmarks, examples and vendored libraries
(which leave the default text output), and the model a model-specific file serves."""

from __future__ import annotations

import re

_TEST_DIRS = {"test", "tests", "testing", "unittest", "unittests", "test_utils"}
_BENCH_DIRS = {"benchmark", "benchmarks", "bench", "benches"}
_EXAMPLE_DIRS = {"example", "examples", "demo", "demos", "tutorials"}
# Directories whose entries are named by model: sglang srt/models/<name>.py and
# arg_groups/model_overrides/<name>.py, vLLM model_executor/models/<name>.py or models/<name>/.
_MODEL_DIRS = {"models", "model_overrides", "dits"}
# Whole upstream libraries a wheel ships as sources or data (FlashInfer's data/cutlass with its
# Python emitters and tests): their own gates are theirs, not the engine's. A `third_party/` the
# engine imports and runs is its code, and stays runtime.
VENDORED_LIBRARIES = {"cutlass", "cccl", "cub", "thrust", "libcudacxx", "cudax", "spdlog", "fmt"}
# Words of a directory or module name that say it serves training, which a server never runs:
# backward passes (`flash_bwd_sm90.py`, `fmha_backward.py`), training front ends and backends
# (`cake_rmsnorm_train_backend/`, `gqa_train.py`), a loss and its gradients (`cake_lm_head_loss/`).
# Whole words only: `post_training/` (an engine serving RL rollouts) and `lossless` are runtime.
_TRAINING_WORDS = {"train", "bwd", "backward", "loss"}
# Words of a directory or module name that say it serves another kind of device, whose
# "capability" is no CUDA compute capability: vLLM's `platforms/rocm.py`, `models/<name>/amd/`.
_OTHER_DEVICE_WORDS = {"amd", "rocm", "hip", "xpu", "npu", "tpu", "hpu", "musa", "neuron", "ascend", "gaudi"}
_NAME_WORDS = re.compile(r"[^a-z0-9]+")


def where(path: str) -> str:
    parts = path.lower().split("/")
    dirs, name = set(parts[:-1]), parts[-1]
    if dirs & VENDORED_LIBRARIES:
        return "vendored"
    if dirs & _TEST_DIRS or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return "test"
    if dirs & _BENCH_DIRS or name.startswith(("bench_", "benchmark_")):
        return "benchmark"
    if dirs & _EXAMPLE_DIRS:
        return "example"
    words = [set(_NAME_WORDS.split(part.removesuffix(".py"))) for part in parts]
    if any(_TRAINING_WORDS & w for w in words):
        return "backward"
    if any(_OTHER_DEVICE_WORDS & w for w in words):
        return "other-device"
    return "runtime"


def model(path: str) -> str | None:
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in _MODEL_DIRS:
            name = parts[i + 1].removesuffix(".py")
            return None if name in {"__init__", "utils", "common", "base"} else name
    return None


def placement(path: str) -> dict[str, str]:
    """`extra.where` and, for a model's file, `extra.model`."""
    out = {"where": where(path)}
    name = model(path)
    if name:
        out["model"] = name
    return out
