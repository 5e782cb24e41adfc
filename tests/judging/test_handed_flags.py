"""A flag handed to a function of the same file is judged by what that function does with it
(issue 14, "judge a decision whole"): vLLM's ReplaySSM config sets `bw = _is_blackwell()` and hands
it to `_mamba2_output_only(..., bw)`, whose `if is_blackwell:` only picks launch numbers."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import handedflags
from capgap.judging.rules.gate_excludes_arch import _numbers_apart

from .test_decisions import _scan

_CONFIG = """
from vllm.platforms import current_platform


def _is_blackwell() -> bool:
    return current_platform.is_device_capability_family(100)


def _tile(d, t):
    return max(16, min(t, d))


def _output_only(dstate, L, is_blackwell):
    if is_blackwell:
        return 64, 1, _tile(dstate, 32), _tile(dstate, 64), 2
    return 16, 1, _tile(dstate, 64), _tile(dstate, 128), 2


def get_config(kernel, **shape):
    bw = _is_blackwell()
    if kernel == "output_only":
        return _output_only(shape["dstate"], 16, bw)
    raise ValueError(kernel)
"""

# the same flag handed to a function that turns a kernel on with it: a path, judged as before
_PATH = _CONFIG.replace(
    """    if is_blackwell:
        return 64, 1, _tile(dstate, 32), _tile(dstate, 64), 2
    return 16, 1, _tile(dstate, 64), _tile(dstate, 128), 2""",
    """    if is_blackwell:
        return run_fused_kernel(dstate, L)
    return run_reference(dstate, L)""",
)


def test_a_flag_that_only_picks_launch_numbers_in_its_callee_is_tuning(tmp_path: Path) -> None:
    found = _scan(tmp_path / "cfg", {"eng/replay_config.py": _CONFIG}, arch="12.0")
    gate = [f for f in found if f.line == 19]
    assert [(f.severity, f.rule) for f in gate] == [("low", "gate-excludes-arch")]
    assert "tuning only" in gate[0].consequence
    assert "hands bw to _output_only(), which returns (16, 1" in gate[0].consequence


def test_a_flag_that_turns_a_path_on_in_its_callee_stays_a_path(tmp_path: Path) -> None:
    found = _scan(tmp_path / "path", {"eng/replay_config.py": _PATH}, arch="12.0")
    gate = [f for f in found if f.line == 19]
    assert [f.severity for f in gate] == ["medium"]
    assert "run_fused_kernel" in gate[0].consequence


def test_only_a_plain_hand_over_to_one_function_is_followed() -> None:
    lines = _CONFIG.split("\n")
    call = next(i + 1 for i, line in enumerate(lines) if "_output_only(shape" in line)
    got = handedflags.handed(lines, "bw", [call])
    assert got is not None and (got.function, got.param) == ("_output_only", "is_blackwell")
    assert (got.span(got.on), got.span(got.off)) == ((15, 15), (16, 16))  # the file's lines
    # the flag also read on the line (`bw and x`), or handed to a method: not followed
    assert handedflags.handed(["f(x, bw and y)"], "bw", [1]) is None
    method = ["self.f(x, bw)", "def f(a, b):", "    if b:", "        return 1", "    return 2"]
    assert handedflags.handed(method, "bw", [1]) is None
    # a callee that does more with the parameter than one `if` on it
    more = ["g(bw)", "def g(on):", "    if on:", "        return 1", "    return log(on)"]
    assert handedflags.handed(more, "bw", [1]) is None
    assert handedflags.handed(more[:4] + ["    return 2"], "bw", [1]) is not None


def test_numbers_apart_compares_the_expression_but_its_sizes() -> None:
    assert _numbers_apart("returns (64, 1, _tile(d, 32))", ["returns (16, 1, _tile(d, 64))"])
    assert not _numbers_apart("returns (64, 1, _tile(d, 32))", ["returns (64, 1, _tile(d, 32))"])
    assert not _numbers_apart("returns load_kernel(90)", ["returns load_kernel(80)"])  # arch numbers
    assert not _numbers_apart("returns fused(x, 64)", ["returns reference(x, 64)"])
    assert not _numbers_apart("returns (64, ...)", ["returns (32, ...)"])
