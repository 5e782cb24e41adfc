"""Native preprocessor gates: evaluation per arch variant, bodies, and the two rules, on small
fixture sources written here (our own snippets)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.native import envs, expr, judge, reader
from capgap.native.judge import findings
from capgap.native.macros import NO_ARM, Table
from capgap.native.records import CODE, EMPTY, ERROR, TRAP
from tests.cli_runner import run_cli

CONFIG_H = """\
#pragma once
#if (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 0))
  #define MYLIB_SM90_SUPPORTED 1
  #if (!defined(MYLIB_SM90A_ENABLED) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900)
    #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
      #define MYLIB_SM90A_ENABLED 1
    #endif
  #endif
#endif
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define MY_FAMILY(X) (__CUDA_ARCH_FAMILY_SPECIFIC__ == X)
#else
#define MY_FAMILY(X) (false)
#endif
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 1000) && MY_FAMILY(1000)
#define MYLIB_SM100F_ENABLED MYLIB_SM90_SUPPORTED
#endif
"""

KERNELS_CU = """\
#include "config.h"

// A Hopper-only kernel: 12.0 gets a trap.
__global__ void __launch_bounds__(128) gemm_sm90(float* out) {
#if defined(MYLIB_SM90A_ENABLED)
  asm volatile("wgmma.fence.sync.aligned;");
  out[0] = 1.f;
#else
  printf("gemm_sm90 needs sm_90a\\n");
  __trap();
#endif
}

// A portable fast path left to 10.0 (family) only: 12.0 gets the slow else.
__global__ void reduce(float* out, const float* in) {
  float acc = 0.f;
#if defined(MYLIB_SM100F_ENABLED)
  acc = warp_sum_fast(in);
  out[threadIdx.x] = acc * 2.f;
#else
  for (int i = 0; i < 32; ++i) acc += in[i];
  out[threadIdx.x] = acc;
#endif
}

// A whole body for 9.0 and newer: 12.0 is included.
__global__ void copy(float* out) {
#if __CUDA_ARCH__ >= 900
  out[0] = 0.f;
#endif
}

// 12.0 has its own arm: no finding.
__device__ int pick() {
#if __CUDA_ARCH__ == 1000
  return 1;
#elif __CUDA_ARCH__ == 1200
  return 2;
#else
  return 3;
#endif
}

// Only 10.0 gets a body, the rest an empty kernel.
__global__ void only_b200(int* flag) {
#if __CUDA_ARCH__ == 1000
  flag[0] = 1;
  flag[1] = 2;
#endif
}

// A build that refuses anything but 9.0a.
__global__ void refuse(int* x) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel needs sm_90a"
#else
  x[0] = 1;
#endif
}
"""


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def _read(tmp_path: Path, files: dict[str, str]) -> list:
    root = _tree(tmp_path, files)
    out = []
    for rel in sorted(files):
        f = reader.read(rel, (root / rel).read_bytes())
        if f is not None:
            f.source = str(root / rel)
            out.append(f)
    return out


def _env(cc: str, variant: str) -> envs.Env:
    return envs.env(parse_arch(cc).facts, variant)


def test_expressions_are_three_valued() -> None:
    class Unknowns(expr.Resolver):
        def defined(self, name: str) -> int | None:
            return None

        def value(self, name: str) -> int | None:
            return {"A": 900}.get(name)

        def call(self, name: str, args: tuple[str, ...]) -> int | None:
            return None

    env = Unknowns()
    assert expr.evaluate(expr.parse("A >= 900 && A < 1000"), env) == 1
    assert expr.evaluate(expr.parse("0 && UNKNOWN"), env) == 0
    assert expr.evaluate(expr.parse("1 || UNKNOWN"), env) == 1
    assert expr.evaluate(expr.parse("1 && UNKNOWN"), env) is None
    assert expr.evaluate(expr.parse("defined(X) ? 1 : 1"), env) == 1
    assert expr.evaluate(expr.parse("(A / 100) % 3 == 0 ? 0x10 : 010"), env) == 16
    assert expr.parse("A >=") is None  # unreadable: unknown, never a guess


def test_variants_set_the_macros_nvcc_sets() -> None:
    plain, a, f = (_env("12.0", v) for v in ("", "a", "f"))
    assert plain.macros["__CUDA_ARCH__"] == 1200 and "__CUDA_ARCH_SPECIFIC__" not in plain.macros
    assert a.macros["__CUDA_ARCH_SPECIFIC__"] == 1200 and a.macros["__CUDA_ARCH_FAMILY_SPECIFIC__"] == 1200
    assert "__CUDA_ARCH_FEAT_SM120_ALL" in a.macros
    assert f.macros["__CUDA_ARCH_FAMILY_SPECIFIC__"] == 1200 and "__CUDA_ARCH_SPECIFIC__" not in f.macros
    assert plain.known("__CUDA_ARCH_FEAT_SM90_ALL") == 0 and plain.known("SOME_BUILD_FLAG") is None


def test_macros_defined_in_headers_are_followed(tmp_path: Path) -> None:
    files = _read(tmp_path, {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU})
    table = Table(files)
    fi = [f.path for f in files].index("kernels.cu")
    sm90_gate = 0  # the first group of kernels.cu
    assert table.reach(fi, sm90_gate, _env("9.0", "a")) == (0,)
    assert table.reach(fi, sm90_gate, _env("9.0", "")) == (1,)
    assert table.reach(fi, sm90_gate, _env("12.0", "a")) == (1,)
    family_gate = 1
    assert table.reach(fi, family_gate, _env("10.0", "f")) == (0,)
    assert table.reach(fi, family_gate, _env("10.0", "")) == (1,)
    assert table.reach(fi, family_gate, _env("10.3", "f")) == (1,)


def test_unknown_build_flags_stay_unknown(tmp_path: Path) -> None:
    src = "#if defined(ENABLE_FAST) && __CUDA_ARCH__ >= 900\nfast();\n#else\nslow();\n#endif\n"
    files = _read(tmp_path, {"a.cu": src})
    table = Table(files)
    assert table.reach(0, 0, _env("12.0", "")) == (0, 1)  # either arm: ENABLE_FAST is a -D flag
    assert table.reach(0, 0, _env("8.0", "")) == (1,)


def test_include_guards_and_self_guards(tmp_path: Path) -> None:
    src = "#ifndef A_H\n#define A_H\n#if !defined(X) && __CUDA_ARCH__ >= 900\n#define X 1\n#endif\n#endif\n"
    use = "#if defined(X)\nuse_x();\n#else\nno_x();\n#endif\n"
    files = _read(tmp_path, {"a.h": src, "b.cu": use + "// __CUDA_ARCH\n"})
    table = Table(files)
    assert table.reach(1, 0, _env("12.0", "")) == (0,)
    assert table.reach(1, 0, _env("8.0", "")) == (1,)


def test_bodies_are_classified(tmp_path: Path) -> None:
    files = _read(tmp_path, {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU})
    k = next(f for f in files if f.path == "kernels.cu")
    bodies = [[a.body for a in g.arms] for g in k.groups]
    assert bodies[0] == [CODE, TRAP]
    assert bodies[1] == [CODE, CODE]
    assert bodies[5] == [ERROR, CODE]
    assert k.groups[0].function is not None and k.groups[0].function.name == "gemm_sm90"
    assert k.groups[0].whole_body and not k.groups[1].whole_body
    assert [g.function.kind for g in k.groups if g.function] == [
        "kernel",
        "kernel",
        "kernel",
        "device",
        "kernel",
        "kernel",
    ]
    assert EMPTY not in bodies[4]  # `#if` without `#else`: no arm, not an empty one
    assert NO_ARM == -1


def test_findings_for_sm120(tmp_path: Path) -> None:
    files = _read(
        tmp_path,
        {
            "include/mylib/config.h": CONFIG_H,
            "csrc/kernels.cu": KERNELS_CU.replace('"config.h"', '"mylib/config.h"'),
        },
    )
    got = {(f.symbol, f.rule): f for f in findings(files, (parse_arch("12.0"),), vendored=False)}
    trap = got[("gemm_sm90", "kernel-body-missing-arch")]
    assert (
        trap.severity == "low"
        and "wgmma" in trap.consequence
        and "'wgmma' (line 6)" in trap.extra["evidence"]
    )
    assert trap.extra["compiles"]["sm_120a"].startswith("a __trap()")
    fast = got[("reduce", "gate-excludes-arch")]
    assert fast.severity == "medium" and fast.present == ("10.0",) and fast.line == 17
    assert got[("only_b200", "kernel-body-missing-arch")].severity == "medium"
    refused = got[("refuse", "kernel-body-missing-arch")]
    assert "#error" in refused.consequence and refused.present == ("9.0",)
    assert not any(sym in {"copy", "pick"} for sym, _ in got)


def test_a_file_read_for_its_needs_is_let_go_and_read_again_for_the_next_arch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judging keeps what each file's arms need, not the file's bytes: the findings for two archs
    are those judged with every file kept in memory."""
    files = _read(tmp_path, {"config.h": CONFIG_H, "csrc/kernels.cu": KERNELS_CU})
    archs = (parse_arch("12.0"), parse_arch("11.0"))
    released = findings(files, archs, vendored=False)
    monkeypatch.setattr(judge._Texts, "release", lambda self: None)
    assert findings(files, archs, vendored=False) == released
    assert released


def test_vendored_gates_only_with_all(tmp_path: Path) -> None:
    files = _read(
        tmp_path, {"3rdparty/cutlass/include/k.cu": KERNELS_CU.replace('#include "config.h"', CONFIG_H)}
    )
    assert findings(files, (parse_arch("12.0"),), vendored=False) == []
    files = [reader.read(f.path, Path(f.source).read_bytes(), True) for f in files]
    for f, src in zip(files, [str(tmp_path / "3rdparty/cutlass/include/k.cu")], strict=True):
        f.source = src
    got = findings(files, (parse_arch("12.0"),), vendored=True)
    assert got and all(f.extra["where"] == "vendored" and f.severity == "low" for f in got)


def test_scan_reports_native_findings(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU})
    result = run_cli("scan", str(root), "--arch", "12.0", "--format", "json", "--no-binaries")
    data = json.loads(result.out)
    rules = {(f["path"], f["symbol"], f["rule"]) for f in data["findings"]}
    assert ("kernels.cu", "reduce", "gate-excludes-arch") in rules
    assert ("kernels.cu", "only_b200", "kernel-body-missing-arch") in rules


@pytest.mark.parametrize(
    "text", ["#if\n#endif\n", "#elif 1\n#endif\n#endif\n", "#if (\n", "#define\n#if __CUDA_ARCH__ >= ((\n"]
)
def test_malformed_directives_do_not_raise(tmp_path: Path, text: str) -> None:
    files = _read(tmp_path, {"x.cu": "// __CUDA_ARCH__\n" + text})
    findings(files, (parse_arch("12.0"),), vendored=False)


def test_an_arm_that_names_the_target_is_its_own(tmp_path: Path) -> None:
    src = """\
    __device__ int tile() {
    #if __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 1200
      return 64;
    #elif __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
      return 128;
    #else
      return 32;
    #endif
    }
    """
    files = _read(tmp_path, {"t.cu": src})
    assert findings(files, (parse_arch("12.0"),), vendored=False) == []
    files = _read(tmp_path, {"t.cu": src.replace("|| __CUDA_ARCH__ == 1200", "")})
    assert [f.present for f in findings(files, (parse_arch("12.0"),), vendored=False)] == [("9.0", "10.0")]


def test_a_pdl_only_arm_is_low(tmp_path: Path) -> None:
    src = """\
    __global__ void k(float* x, bool pdl) {
    #if __CUDA_ARCH__ == 1030
      if (pdl) { asm volatile("griddepcontrol.wait;" ::: "memory"); }
    #endif
      x[0] = 1.f;
    }
    """
    (got,) = findings(_read(tmp_path, {"k.cu": src}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "low" and "griddepcontrol" in got.consequence


def test_the_cache_answers_an_unchanged_tree_and_rereads_a_changed_file(tmp_path: Path) -> None:
    import os

    from capgap.native import analyzer
    from capgap.scan.analyzers import ScanOptions
    from capgap.targets import resolve_target

    root = _tree(tmp_path / "t", {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU})
    options = ScanOptions(archs=(parse_arch("12.0"),))
    first = analyzer.analyze(resolve_target(str(root)), options)
    again = analyzer.analyze(resolve_target(str(root)), options)
    assert [f.to_json() for f in again.findings] == [f.to_json() for f in first.findings]
    kernels = root / "kernels.cu"
    kernels.write_text(
        KERNELS_CU.replace("#if __CUDA_ARCH__ == 1000\n  flag[0]", "#if __CUDA_ARCH__ >= 1000\n  flag[0]")
    )
    os.utime(kernels, ns=(1, 1))
    changed = analyzer.analyze(resolve_target(str(root)), options)
    assert {f.symbol for f in first.findings} - {f.symbol for f in changed.findings} == {"only_b200"}
    cold = analyzer.analyze(resolve_target(str(root)), ScanOptions(archs=options.archs, use_cache=False))
    assert [f.to_json() for f in cold.findings] == [f.to_json() for f in changed.findings]


def test_another_capgap_judges_an_unchanged_native_tree_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The native findings kept for an unchanged tree are those of the capgap that made them: an
    edited or upgraded one (its code stamp differs) judges the tree again."""
    from capgap.native import analyzer, judge
    from capgap.scan.analyzers import ScanOptions
    from capgap.targets import resolve_target

    root = _tree(tmp_path / "t", {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU})
    options = ScanOptions(archs=(parse_arch("12.0"),))
    analyzer.analyze(resolve_target(str(root)), options)
    judged: list[int] = []
    real = judge.findings
    monkeypatch.setattr(judge, "findings", lambda *a, **k: judged.append(1) or real(*a, **k))
    analyzer.analyze(resolve_target(str(root)), options)
    assert judged == []  # the same capgap: the last answer stands
    monkeypatch.setattr(analyzer, "code_stamp", lambda: "another-build")
    analyzer.analyze(resolve_target(str(root)), options)
    assert judged == [1]


def test_a_long_chain_of_macros_is_no_crash(tmp_path: Path) -> None:
    chain = "".join(f"#define M{i} M{i + 1}\n" for i in range(3000)) + "#define M3000 __CUDA_ARCH__\n"
    src = chain + "__global__ void k(int* x) {\n#if M0 == 1000\n  x[0] = 1;\n#endif\n}\n"
    findings(_read(tmp_path, {"m.cu": src}), (parse_arch("12.0"),), vendored=False)


def test_the_native_analysis_started_ahead_in_a_child_finds_what_it_finds_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.native import analyzer
    from capgap.reading import forked
    from capgap.scan.analyzers import ScanOptions
    from capgap.scan.run import run_scan

    if not forked.can_fork():
        pytest.skip("no fork on this platform")
    root = _tree(tmp_path / "t", {"config.h": CONFIG_H, "kernels.cu": KERNELS_CU, "m.py": "x = 1\n"})
    monkeypatch.setattr(analyzer, "_POOL_MIN_BYTES", 1)  # a tree this small is worth a child too
    started: list[object] = []
    start = analyzer.start_ahead
    monkeypatch.setattr(analyzer, "start_ahead", lambda t, o: started.append(start(t, o)) or started[-1])
    here = run_scan([str(root)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, jobs=1))
    assert started == [None]
    ahead = run_scan([str(root)], ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, jobs=2))
    assert isinstance(started[-1], forked.Ahead)
    assert ahead.to_json() == here.to_json() and here.findings


def test_a_special_case_the_newer_or_kin_gpus_go_without_is_low(tmp_path: Path) -> None:
    # 9.0 alone takes a scalar path; 10.x and 12.0 all compile the packed one: Hopper's special case
    hopper = """\
    __global__ void k(float* x, const float* y) {
    #if __CUDA_ARCH__ == 900
      x[threadIdx.x] = y[threadIdx.x] * y[threadIdx.x] + 1.f;
    #else
      float2 v = make_float2(y[2 * threadIdx.x], y[2 * threadIdx.x + 1]);
      x[threadIdx.x] = v.x * v.x + v.y * v.y;
    #endif
    }
    """
    (got,) = findings(_read(tmp_path, {"k.cu": hopper}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "low" and "which datacenter Blackwell (10.x) goes without" in got.consequence
    # 10.3 alone does extra work, 10.0 goes without it as 12.0 does: B300's special case
    b300 = hopper.replace("== 900", "== 1030")
    (got,) = findings(_read(tmp_path / "b300", {"k.cu": b300}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "low" and "which 10.0 goes without" in got.consequence
    # 9.0 and 10.0 each take a path of their own (`#if == 900` / `#elif == 1000`); 10.3 compiles
    # the packed one as 12.0 does: both are special cases, no path the others share is lost
    own_arm = "    #elif __CUDA_ARCH__ == 1000\n      x[threadIdx.x] = 0.f;\n    #else\n"
    both = hopper.replace("    #else\n", own_arm)
    (got,) = findings(_read(tmp_path / "both", {"k.cu": both}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "low" and "which datacenter Blackwell (10.x) goes without" in got.consequence
    # ... but where the other arm serves every 10.x, the target alone goes without it: medium
    open_ended = both.replace("== 1000", ">= 1000 && __CUDA_ARCH__ < 1100")
    (got,) = findings(_read(tmp_path / "open", {"k.cu": open_ended}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "medium"
    # where every 10.x, a shipped target of the same code, gets nothing at all as 12.0 does (an
    # `elect.sync` left to sm_90a's feature macro; FlashInfer's Cake GDP kernels finishing the Hopper
    # arm's reduction in a `#if __CUDA_ARCH__ == 900` of its own), the arm is Hopper's too
    elect = """\
    __device__ bool elect_one() {
      unsigned pred = 0;
    #if defined(__CUDA_ARCH_FEAT_SM90_ALL)
      asm volatile("elect.sync _|%0, 0xffffffff;" : "=r"(pred));
    #endif
      return pred;
    }
    """
    (got,) = findings(_read(tmp_path / "elect", {"e.cu": elect}), (parse_arch("12.0"),), vendored=False)
    assert got.severity == "low" and "which datacenter Blackwell (10.x) goes without" in got.consequence
    # Ada has no elect.sync at all (sm_90 PTX): expected there, for that reason
    (got,) = findings(_read(tmp_path / "elect89", {"e.cu": elect}), (parse_arch("8.9"),), vendored=False)
    assert got.severity == "low" and got.consequence.startswith("expected:")


@pytest.mark.parametrize(
    "text",
    [
        b"", b"int x = 1;\n", b"// uses TCGEN05 here\n", b"tmem_alloc(); \xc3\xa9 wgmma\n",
        b"sumMA \xe2\x80\x94 xumma\n", b"\xff\xfe no words", b"auto a = multimem_ld(); // NVLS\n",
        b"flash_attn_3 and deep_gemm\n",
    ],
)  # fmt: skip
def test_needs_ruled_out_in_one_pass_are_those_the_finds_spell(text: bytes) -> None:
    """bodies.needs rules texts out by one C pass over all the spellings; what it finds is what a
    find per spelling found."""
    from capgap.native import bodies

    def by_finds(text: bytes) -> tuple[tuple[str, ...], ...]:
        low = text.lower()
        return tuple(
            feats
            for feats, spellings in bodies.NEEDS
            if any(bodies._word_at(low, word, starts) >= 0 for word, starts in spellings)
        )

    assert bodies.needs(text, 1, "")[0] == by_finds(text)


@pytest.mark.parametrize(
    "data",
    [b"", b"no words", b"summary; umma_desc; TMEM cols", b"x_tmem_y \xc3\xa9 tcgen05.mma", b"sumUMMA umma"],
)
def test_the_first_need_word_a_source_spells_is_the_regex_first_match(data: bytes) -> None:
    from capgap.judging import native_words
    from capgap.reading import native

    hit = native_words.TIERS[0][1].search(data.lower())
    want = None if hit is None else (data[hit.start() : hit.end()].decode("ascii", "replace"), "r")
    assert native._spelled(data, "r") == want
