"""Paths the target has after all: its own branch that returns before a last-resort raise, the
same call given to it by another decision of the function, a flag read inside a multi-line test
that also admits it, and per-arch numbers picked by a condition (tuning)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan


def test_a_branch_that_returns_before_its_last_raise_is_the_target_s_own(tmp_path: Path) -> None:
    body = """
    import torch


    def normalize():
        major, minor = torch.cuda.get_device_capability()
        if major == 9:
            return (major, str(minor) + "a")
        elif major == 12:
            if minor == 0:
                return (major, "0f")
            raise RuntimeError("SM 12.1+ requires CUDA >= 12.9")
        elif major >= 10:
            return (major, str(minor) + "a")
        return (major, str(minor))
    """
    assert _scan(tmp_path, {"eng/ctx.py": body}) == []


def test_a_branch_that_only_raises_still_turns_the_target_away(tmp_path: Path) -> None:
    body = """
    import torch


    def normalize():
        major, minor = torch.cuda.get_device_capability()
        if major == 9:
            return (major, str(minor) + "a")
        elif major == 12:
            raise RuntimeError("SM 12.x is not supported")
        return (major, str(minor))
    """
    assert [f.rule for f in _scan(tmp_path, {"eng/ctx.py": body})] == ["gate-excludes-arch"]


def test_the_same_call_given_to_the_target_above_is_its_own(tmp_path: Path) -> None:
    body = """
    import torch


    def post(x, rows):
        major = torch.cuda.get_device_capability()[0]
        if major >= 10 and rows <= 384:
            return split_h(x)
        if use_tilelang():
            if major == 9 and rows <= 64:
                return split_h(x)
        return plain(x)
    """
    found = _scan(tmp_path, {"eng/post.py": body})
    assert [f.line for f in found] == []


def test_without_the_call_above_the_hopper_path_is_a_loss(tmp_path: Path) -> None:
    body = """
    import torch


    def post(x, rows):
        major = torch.cuda.get_device_capability()[0]
        if use_tilelang():
            if major == 9 and rows <= 64:
                return split_h(x)
        return plain(x)
    """
    assert _brief(_scan(tmp_path, {"eng/post.py": body})) == [
        ("gate-excludes-arch", "medium", "eng/post.py", 7)
    ]


def test_a_flag_read_inside_a_multiline_test_is_judged_there(tmp_path: Path) -> None:
    body = """
    import torch


    def norm(x, is_blackwell):
        hopper_fused = torch.cuda.get_device_capability()[0] == 9 and x.shape[0] <= 96
        if (
            x.is_cuda
            and (torch.cuda.get_device_capability()[0] >= 10 or hopper_fused)
        ):
            return fused(x)
        return plain(x)
    """
    assert _scan(tmp_path, {"eng/norm.py": body}) == []


def test_numbers_picked_by_a_condition_are_tuning(tmp_path: Path) -> None:
    body = """
    import torch


    def factors(fp8, scaled):
        if torch.cuda.get_device_capability()[0] == 9:
            return (2, 2) if fp8 else (1, 2)
        return (2, 2) if scaled else (4, 4)
    """
    found = _scan(tmp_path, {"eng/moe.py": body})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/moe.py", 5)]
    assert found[0].extra["tuning"] is True


def test_a_tuple_of_as_many_knobs_set_another_way_is_tuning(tmp_path: Path) -> None:
    body = """
    import torch


    def tiles(v):
        if torch.cuda.get_device_capability()[0] == 9:
            return (4, 1)
        return (min(next_power_of_2(v), 32), 1)
    """
    found = _scan(tmp_path, {"eng/tiles.py": body})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/tiles.py", 5)]


def test_an_arm_that_runs_what_only_the_target_has_is_its_own(tmp_path: Path) -> None:
    # Blackwell is given Triton because FA3 is Hopper's wgmma kernel: an H100's FA3 is its own path
    body = """
    import torch


    def is_blackwell():
        return torch.cuda.get_device_capability()[0] >= 10


    def draft_backend(self):
        if is_blackwell():
            return self._create_triton_decode_backend()
        return self._create_fa3_decode_backend()
    """
    assert _scan(tmp_path / "h100", {"eng/draft.py": body}, arch="9.0") == []
    # where the target's arm runs nothing of its own, the floor that shuts it out is judged
    portable = body.replace("_create_fa3_decode_backend", "_create_torch_decode_backend")
    assert _brief(_scan(tmp_path / "again", {"eng/draft.py": portable}, arch="9.0")) == [
        ("gate-excludes-arch", "medium", "eng/draft.py", 9)
    ]


def test_an_outcome_answering_with_the_target_s_own_test_is_its_own(tmp_path: Path) -> None:
    # vLLM's supports_trtllm_attention read on a B200: past `if Hopper or 12.x: return not prefill`
    # it answers `family(100)`, which holds for it and for none of those GPUs
    body = """
    from eng import envs
    from eng.platforms import current_platform


    def supports_trtllm_attention(is_prefill):
        if envs.BATCH_INVARIANT:
            return False
        if current_platform.is_device_capability(90) or current_platform.is_device_capability_family(120):
            return not is_prefill
        return current_platform.is_device_capability_family(100)
    """
    assert _scan(tmp_path / "b200", {"eng/trt.py": body}, arch="10.0") == []


def test_a_later_decision_giving_the_target_its_own_yes_is_its_own_path(tmp_path: Path) -> None:
    body = """
    from eng.platforms import current_platform


    def _nvfp4_kv_on_fa2():
        return current_platform.is_device_capability(90) or current_platform.is_device_capability_family(120)


    def supports_kv_cache_dtype(kv_cache_dtype):
        if kv_cache_dtype is not None and kv_cache_dtype.startswith("nvfp4"):
            if _nvfp4_kv_on_fa2():
                # the slot-mapping writer has no scale search
                return kv_cache_dtype == "nvfp4"
            return (
                current_platform.is_device_capability_family(100)
                and supports_trtllm_attention(is_prefill=True)
                and supports_trtllm_attention(is_prefill=False)
            )
        return True
    """
    assert _scan(tmp_path / "b200", {"eng/kv.py": body}, arch="10.0") == []


def test_an_if_that_only_gives_reasons_is_a_restriction_in_a_reason_function(tmp_path: Path) -> None:
    # vLLM's supports_combination: for NVFP4 on 8.x/9.0/12.x, FA2 prefill turns some shapes away;
    # a B200, which skips that branch, loses nothing
    body = """
    import torch


    def supports_combination(head_size, kv_cache_dtype, has_sink):
        major = torch.cuda.get_device_capability()[0]
        if kv_cache_dtype.startswith("nvfp4") and major in (8, 9, 12):
            if head_size == 64:
                return "fa2 prefill misreads an NVFP4 KV cache at head_size 64"
            if has_sink:
                return "the sink prefill wrapper cannot read an NVFP4 KV cache"
        return None
    """
    assert _scan(tmp_path / "b200", {"eng/combo.py": body}, arch="10.0") == []
