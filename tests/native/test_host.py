"""Host-side C++ dispatch (tree-sitter): if/else-if chains, switch, TORCH_CHECK, judged per arch."""

from __future__ import annotations

import textwrap

import pytest

from capgap.arch import parse_arch
from capgap.native import host, hostjudge

pytest.importorskip("tree_sitter_cpp", reason="tree-sitter-cpp is not installed")

DISPATCH = textwrap.dedent(
    """\
    void run_gemm(int sm_version, Tensor out) {
      if (sm_version >= 90 && sm_version < 100) {
        launch_gemm_sm90_wgmma(out);
      } else if (sm_version >= 100 && sm_version < 120) {
        launch_gemm_sm100_umma(out);
      } else {
        TORCH_CHECK(false, "unsupported arch ", sm_version);
      }
    }

    void run_norm(int sm, Tensor out) {
      switch (sm) {
        case 90:
        case 100:
          fused_norm_vectorized(out);
          break;
        default:
          throw std::runtime_error("fused norm needs sm90 or sm100");
      }
    }

    void run_topk(Tensor x) {
      auto props = at::cuda::getCurrentDeviceProperties();
      TORCH_CHECK(props->major == 9 || props->major == 10, "topk needs Hopper or Blackwell");
      topk_kernel(x);
    }

    void run_mine(int sm_version) {
      if (sm_version == 120) { rtx_path(); } else if (sm_version >= 90) { generic(); }
    }
    """
).encode()


def test_decisions_are_read_with_their_arms() -> None:
    assert host.wanted(DISPATCH)
    decisions = host.read(DISPATCH)
    kinds = [(d.kind, d.function, len(d.arms)) for d in decisions]
    assert kinds == [
        ("chain", "run_gemm", 3),
        ("switch", "run_norm", 3),
        ("check", "run_topk", 2),
        ("chain", "run_mine", 2),
    ]
    gemm = decisions[0]
    assert [a.body for a in gemm.arms] == ["code", "code", "error"]
    norm = decisions[1]
    assert [a.cond for a in norm.arms] == ["sm == 90", "sm == 100", "1"] and norm.arms[0].body == "code"


def test_judged_like_the_python_side() -> None:
    decisions = host.read(DISPATCH)
    got = {
        f.symbol: f
        for f in hostjudge.findings("ops.cu", decisions, (parse_arch("12.0"),), {"where": "runtime"})
    }
    assert set(got) == {"run_gemm", "run_norm", "run_topk"}  # run_mine has its own arm for 12.0
    assert (
        got["run_gemm"].severity == "low" and "wgmma" in got["run_gemm"].consequence
    )  # the arm's kernel name
    assert got["run_norm"].severity == "medium" and got["run_norm"].present == (
        "9.0",
    )  # case 90 (103 falls to default)
    assert "an error" in got["run_norm"].consequence
    topk = got["run_topk"]
    assert topk.severity == "medium" and topk.extra["decision"] == "host-check" and "10.0" in topk.present


def test_a_guard_of_the_targets_own_decides_for_it() -> None:
    src = textwrap.dedent(
        """\
        int tile(int sm_version) {
          if (sm_version == 120 || sm_version == 121) return tile_sm120;
          if (sm_version >= 100 && sm_version < 120) return tile_sm100;
          if (sm_version == 90) return tile_sm90;
          return -1;
        }
        """
    ).encode()
    assert hostjudge.findings("c.h", host.read(src), (parse_arch("12.0"),), {"where": "runtime"}) == []


def test_only_nodes_around_a_comparison_or_a_switch_are_walked_and_nothing_is_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk skips subtrees with no arch comparison and no `switch` in their text: the same
    decisions as a walk of every node, here beside unrelated functions and a comparison that
    only the whole identifier (`use_sm_arch`) reaches."""
    unrelated = "".join(f"void f{i}(int x) {{ if (x > {i}) {{ g(x); }} }}\n" for i in range(50))
    src = unrelated.encode() + DISPATCH + b"void h(int use_sm_arch) { if (use_sm_arch >= 90) { k(); } }\n"
    walked = host.read(src)
    assert len(walked) == 5
    monkeypatch.setattr(host, "_marks", lambda data: list(range(len(data))))  # every node walked
    assert host.read(src) == walked


FLAGGED_CHECK = textwrap.dedent(
    """\
    std::vector<at::Tensor> flash_attn_by_atoms(at::Tensor& out, const bool is_causal) {
      auto dprops = at::cuda::getCurrentDeviceProperties();
      bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;
      bool is_sm90 = dprops->major == 9 && dprops->minor == 0;
      TORCH_CHECK(is_sm90 || is_sm8x, "FlashAttention only supports Ampere GPUs or newer.");
      run_mha_fwd(out, is_causal);
      return {out};
    }
    """
).encode()


def test_a_check_of_flags_set_from_arch_tests_reads_their_tests() -> None:
    """DeepSpeed 0.19.8's blocked_flash.cpp: `bool is_sm90 = dprops->major == 9 && ...;` then
    `TORCH_CHECK(is_sm90 || is_sm8x, ...)` refuses 12.0 (and 10.x) every inference-v2 attention call
    (an unseen engine, judged a gap). The flags' names are no evidence of what the path runs."""
    (decision,) = host.read(FLAGGED_CHECK)
    assert "dprops->major == 9" in decision.arms[0].cond
    place = {"where": "runtime"}
    (found,) = hostjudge.findings("blocked_flash.cpp", [decision], (parse_arch("12.0"),), place)
    assert (found.severity, found.present) == ("medium", ("9.0",))
    assert "an error" in found.consequence


def test_a_flag_set_twice_is_no_one_test() -> None:
    src = FLAGGED_CHECK.replace(b"run_mha_fwd(out, is_causal);", b"is_sm90 = false;")
    (decision,) = host.read(src)  # (is_sm8x is still read through its test)
    assert decision.arms[0].cond == "is_sm90 || (dprops->major == 8 && dprops->minor >= 0)"
