"""A branch whose log names the defect it steps around ("... to avoid triton_kernels SIGSEGV") is a
workaround, a downgrade for the GPUs that take it (issue 14, point 2): being left out of it is good."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_OVERRIDE = """
import torch

def moe_backend_overrides(cfg):
    overrides = {{}}
    if torch.cuda.get_device_capability()[0] >= 10 and driver_version() >= (595,):
        overrides["moe_runner_backend"] = "triton"
        logger.warning("{words}")
    else:
        overrides["moe_runner_backend"] = "triton_kernel"
    return overrides
"""


def test_a_workaround_for_newer_gpus_leaves_no_gap_on_an_older_one(tmp_path: Path) -> None:
    words = "Detected Blackwell with driver >= 595, using triton MOE kernel to avoid triton_kernels SIGSEGV."
    found = _scan(tmp_path, {"eng/gpt_oss.py": _OVERRIDE.format(words=words)}, arch="9.0")
    assert [f for f in found if f.severity != "low"] == []


def test_the_same_branch_logging_a_choice_is_still_a_path(tmp_path: Path) -> None:
    words = "Detected Blackwell, using the triton MOE kernel."
    (found,) = _scan(tmp_path, {"eng/gpt_oss.py": _OVERRIDE.format(words=words)}, arch="9.0")
    assert found.severity == "medium"
    assert found.message.startswith("get_device_capability leaves 9.0 out: 10.0, 10.3, 11.0, 12.0, 12.1 logs")


_COPY = """
import torch

def forward(q, k, v, use_fa4):
    if use_fa4 and (10, 0) <= torch.cuda.get_device_capability() < (11, 0) and q.shape[-1] == 256:
        # FA4 D=256 SM10x kernels need packed K/V views materialized
        q, k, v = [x.contiguous() for x in (q, k, v)]
    return attention(q, k, v)
"""


def test_a_branch_that_only_copies_tensors_costs_the_gpus_left_out_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/attn.py": _COPY}, arch="12.0")
    assert [f for f in found if f.severity != "low"] == []


def test_a_branch_that_copies_then_calls_a_kernel_is_a_path(tmp_path: Path) -> None:
    code = _COPY.replace(
        "for x in (q, k, v)]", "for x in (q, k, v)]\n        return fa4_d256_attention(q, k, v)"
    )
    (found,) = _scan(tmp_path, {"eng/attn.py": code}, arch="12.0")
    assert found.severity == "medium"


_SCHEDULE = """
import torch

def _is_sm100():
    return torch.cuda.get_device_capability()[0] == 10

def schedule(ctx_lens, next_n):
    # the SM100 MQA-logits kernel reads a [B, next_n] schedule; the rest stays per token
    if next_n >= 2 and _is_sm100():
        return {ret}
    return per_token_lens(ctx_lens, next_n)
"""


def test_a_branch_that_only_hands_back_an_input_in_another_shape_is_no_path(tmp_path: Path) -> None:
    code = _SCHEDULE.format(ret="ctx_lens.view(-1, 1).expand(-1, next_n).contiguous()")
    (found,) = _scan(tmp_path, {"eng/schedule.py": code}, arch="12.0")
    assert found.severity == "low"
    assert found.extra["evidence"] == "the branch only reshapes its inputs"
    assert found.consequence.startswith("expected: 10.0, 10.3 get their inputs laid out for a kernel chosen")


def test_a_reshape_of_what_a_kernel_returns_is_still_a_path(tmp_path: Path) -> None:
    code = _SCHEDULE.format(ret="sm100_schedule_kernel(ctx_lens, next_n).view(-1, next_n)")
    (found,) = _scan(tmp_path, {"eng/schedule.py": code}, arch="12.0")
    assert found.severity == "medium"
    assert "12.0 out: 10.0, 10.3 returns sm100_schedule_kernel" in found.message


_REPLAY = """
import torch

def _is_sm100():
    return torch.cuda.get_device_capability()[0] == 10

def replay(metadata, bs, next_n):
    schedule = None
    if next_n >= 2 and _is_sm100() and {check}:
        schedule = metadata.lens_2d
    return run_indexer(metadata, schedule)
"""


def test_a_branch_that_hands_on_a_value_its_test_requires_set_is_plumbing(tmp_path: Path) -> None:
    code = _REPLAY.format(check="metadata.lens_2d is not None")
    (found,) = _scan(tmp_path, {"eng/replay.py": code}, arch="12.0")
    assert found.severity == "low"
    assert found.extra["evidence"] == (
        "the branch only hands on 'metadata.lens_2d', which its test requires to be set"
    )


def test_handing_on_a_value_the_test_does_not_check_is_still_a_path(tmp_path: Path) -> None:
    code = _REPLAY.format(check="bs > 1")
    (found,) = _scan(tmp_path, {"eng/replay.py": code}, arch="12.0")
    assert found.severity == "medium"


_FUSED_GEMM1 = """
import torch

def run_moe(x, tokens, out):
    fuse_gated_gemm1 = (
        x.is_gated
        # {words}
        and tokens <= 64
        and torch.cuda.get_device_capability(x.device)[0] == 9
    )
    return launch(x, out, fuse_gated_gemm1)
"""


def test_a_comment_saying_a_sibling_runs_a_schedule_more_effectively_is_a_preference(tmp_path: Path) -> None:
    """FlashInfer's cutile FP8 MoE: "Sparse Hopper SwiGLU reuses the packed input more effectively when
    gate and up projections share one GEMM1 program" beside `major == 9`: measured for Hopper."""
    words = "Sparse Hopper SwiGLU reuses the packed input more effectively when gate and up share GEMM1."
    (found,) = _scan(tmp_path, {"eng/moe.py": _FUSED_GEMM1.format(words=words)})
    assert found.severity == "low"
    assert "a preference or workaround for 9.0" in found.consequence


def test_a_comment_that_only_says_what_the_sibling_runs_is_no_preference(tmp_path: Path) -> None:
    words = "Sparse Hopper SwiGLU shares one GEMM1 program for gate and up."
    (found,) = _scan(tmp_path, {"eng/moe.py": _FUSED_GEMM1.format(words=words)})
    assert found.severity == "medium"
