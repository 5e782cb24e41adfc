"""Host dispatch through C++ helpers defined elsewhere (a header of the tree), and host dispatch that
admits 12.0 into tcgen05 / wgmma launchers; fixture sources written here."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from capgap.arch import all_facts, parse_arch
from capgap.native import analyzer, helpers, host, hostjudge
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target

pytest.importorskip("tree_sitter_cpp", reason="tree-sitter-cpp is not installed")

COMMON_H = """\
#pragma once
#include <cuda_runtime.h>

inline int get_arch() {
  int dev = 0;
  cudaGetDevice(&dev);
  int sm_major = 0, sm_minor = 0;
  check(cudaDeviceGetAttribute(&sm_major, cudaDevAttrComputeCapabilityMajor, dev));
  check(cudaDeviceGetAttribute(&sm_minor, cudaDevAttrComputeCapabilityMinor, dev));
  return sm_major * 10 + sm_minor;
}

inline bool isSm90OrLater() { return get_arch() >= 90; }

inline bool isHopper() {
  // a comment between the statements
  bool const hopper = get_arch() == 90;
  return hopper;
}

inline bool isSm120Family() { return get_arch() / 10 == 12; }

static bool use_fused_path(int sm, bool allow = true) {
  if (!allow) return false;
  if (sm == 90) {
    return true;
  } else if (sm >= 100 && sm < 110) {
    return true;
  }
  return false;
}

struct Runner {
  bool use_sm90_tma() const { return isSm90OrLater() && tma_enabled_; }
  bool tma_enabled_ = true;
};
"""

# No comparison with a number in this file: only its helper calls make it worth parsing.
OPS_CU = """\
#include "common.h"

void run_norm(Tensor out, int sm_version) {
  if (use_fused_path(sm_version)) {
    fused_norm_vectorized(out);
  } else {
    unfused_norm(out);
  }
}

void run_attn(Tensor out) {
  if (isHopper()) {
    attn_fast(out);
  } else {
    attn_generic(out);
  }
}

void run_gemm(Tensor out) {
  if (isSm90OrLater()) {
    launch_gemm<cute::SM90_64x128x16_F32BF16BF16_SS>(out);
  } else {
    launch_gemm_simt(out);
  }
}

void run_tma(Runner const& r, Tensor out) {
  if (r.use_sm90_tma()) {
    run_umma_pipeline(out);
  } else {
    run_simt(out);
  }
}

void run_mine(Tensor out) {
  if (isSm120Family()) {
    rtx_path(out);
  } else if (isSm90OrLater()) {
    hopper_path(out);
  } else {
    generic_path(out);
  }
}
"""


def _tree(tmp_path: Path) -> Path:
    for rel, text in {"csrc/common.h": COMMON_H, "csrc/ops.cu": OPS_CU}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return tmp_path


def _table() -> helpers.HelperTable:
    return helpers.HelperTable([("csrc/common.h", host.read_all(COMMON_H.encode())[1])])


def test_helpers_are_read_with_their_guards_and_bindings() -> None:
    found = {h.name: h for h in host.read_all(COMMON_H.encode())[1]}
    assert set(found) == {
        "get_arch",
        "isSm90OrLater",
        "isHopper",
        "isSm120Family",
        "use_fused_path",
        "use_sm90_tma",
    }
    assert found["get_arch"].returns == (("1", "(major) * 10 + (minor)"),)
    assert found["isHopper"].returns == (("1", "(get_arch() == 90)"),)
    fused = found["use_fused_path"]
    assert fused.params == ("sm", "allow") and fused.defaults == ("", "true") and fused.required == 1
    assert [c for c, _ in fused.returns] == ["(!allow)", "(sm == 90)", "(sm >= 100 && sm < 110)", "1"]


def test_a_helper_call_is_evaluated_per_arch() -> None:
    table = _table()
    decisions = host.read(OPS_CU.encode())
    by_fn = {d.function: d for d in decisions}
    assert set(by_fn) == {"run_norm", "run_attn", "run_gemm", "run_tma", "run_mine"}
    facts = all_facts()

    def reach(fn: str, cc: str) -> tuple[int, ...]:
        return hostjudge.reach(by_fn[fn], facts[cc], table, "csrc/ops.cu")

    assert [reach("run_norm", cc) for cc in ("8.0", "9.0", "10.0", "10.3", "11.0", "12.0")] == [
        (1,), (0,), (0,), (0,), (1,), (1,)
    ]  # fmt: skip
    assert reach("run_attn", "9.0") == (0,) and reach("run_attn", "12.0") == (1,)
    assert (
        reach("run_mine", "12.0") == (0,)
        and reach("run_mine", "10.0") == (1,)
        and reach("run_mine", "8.0") == (2,)
    )
    assert reach("run_tma", "12.0") == (0, 1) and reach("run_tma", "8.0") == (1,)  # a member flag: either arm
    assert reach("run_gemm", "12.0") == (0,)
    # without the helpers nothing is known
    assert hostjudge.reach(by_fn["run_norm"], facts["9.0"]) == (0, 1)


def test_findings_through_helpers_in_a_header(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    result = analyzer.analyze(
        resolve_target(str(root)), ScanOptions(archs=(parse_arch("12.0"),), use_cache=False)
    )
    got = {(f.path, f.symbol, f.rule): f for f in result.findings}
    norm = got[("csrc/ops.cu", "run_norm", "gate-excludes-arch")]
    assert norm.severity == "medium" and norm.present == ("9.0", "10.0", "10.3") and norm.line == 4
    attn = got[("csrc/ops.cu", "run_attn", "gate-excludes-arch")]
    assert attn.present == ("9.0",)
    gemm = got[("csrc/ops.cu", "run_gemm", "gate-admits-unsupported")]
    assert gemm.severity == "high" and gemm.present == ("9.0",) and gemm.extra["needs"] == ["wgmma"]
    assert gemm.extra["evidence"] == "'SM90_64x128x16_F32BF16BF16_SS' (line 21)"
    tma = got[("csrc/ops.cu", "run_tma", "gate-admits-unsupported")]
    assert tma.severity == "medium" and set(tma.present) == {"10.0", "10.3", "11.0"}  # 12.0 may take it
    assert not any(sym == "run_mine" for _, sym, _ in got)  # 12.0 has its own arm
    # the helpers' own guard clauses are decisions too (use_fused_path's `if (sm == 90) return true`)
    assert {(p, s) for p, s, _ in got} <= {
        ("csrc/ops.cu", "run_norm"), ("csrc/ops.cu", "run_attn"), ("csrc/ops.cu", "run_gemm"),
        ("csrc/ops.cu", "run_tma"), ("csrc/common.h", "use_fused_path"),
    }  # fmt: skip


def test_a_helper_defined_twice_differently_is_unknown_elsewhere() -> None:
    one = host.read_all(b"bool is_fast_arch() { return get_sm_version() == 90; }")[1]
    two = host.read_all(b"bool is_fast_arch() { return get_sm_version() >= 100; }")[1]
    table = helpers.HelperTable([("a.cu", one), ("b.cu", two)])
    d = host.read(b"void f() { if (is_fast_arch()) { a(); } else { b(); } }")[0]
    nine = all_facts()["9.0"]
    assert hostjudge.reach(d, nine, table, "c.cu") == (0, 1)
    assert hostjudge.reach(d, nine, table, "a.cu") == (0,)  # its own file's definition
    assert hostjudge.reach(d, nine, table, "b.cu") == (1,)


def test_a_helper_that_may_return_anywhere_is_no_helper() -> None:
    src = (
        b"bool odd_arch(int sm) { for (int i = 0; i < 3; ++i) { if (sm == i) return true; } return sm > 90; }"
    )
    assert host.read_all(src)[1] == []
