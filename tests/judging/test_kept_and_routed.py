"""What the target keeps where a branch is skipped, a path the function already routed the target
away from, and the functions a path names through a package imported whole."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PLATFORM = """
    import torch

    def is_sm100():
        return torch.cuda.get_device_capability()[0] == 10

    def is_sm120():
        return torch.cuda.get_device_capability()[0] == 12
"""


def test_a_value_set_above_the_branch_is_the_target_s_own_choice(tmp_path: Path) -> None:
    # `x = "auto"` then `if is_sm100: x = "cutlass"` is `"cutlass" if is_sm100 else "auto"`
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/prefill.py": """
        from eng.plat import is_sm100

        class Prefill:
            def __init__(self, args):
                backend = "auto"
                if is_sm100():
                    if args.graphs:
                        print("no cutlass with graphs")
                    else:
                        backend = "cutlass"
                self.wrapper = make_wrapper(backend=backend)
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/prefill.py", 6)]
    assert "a choice between implementations" in found[0].consequence
    assert "'auto'" in found[0].consequence


def test_a_value_changed_between_is_not_kept(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/prefill.py": """
        from eng.plat import is_sm100

        class Prefill:
            def __init__(self, args):
                backend = "auto"
                if args.fast:
                    backend = pick(args)
                if is_sm100():
                    backend = "cutlass"
                self.wrapper = make_wrapper(backend=backend)
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/prefill.py", 8)]


def test_a_path_the_function_already_routed_the_target_away_from_is_expected(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/select.py": """
        from eng.plat import is_sm100, is_sm120

        def select(asked):
            target = asked
            if asked is None:
                if is_sm120():
                    target = "sdpa"
                elif is_sm100():
                    set_version(4)
                    target = "fa"
                else:
                    target = "fa"
            if target == "fa" and is_sm100():
                set_version(4)
            return target
    """,
        },
    )
    lines = {f.line: f.severity for f in found}
    assert lines[13] == "low"
    assert "already keeps 12.0 from this path" in next(f for f in found if f.line == 13).consequence


def test_a_function_named_through_a_package_imported_whole_is_evidence(tmp_path: Path) -> None:
    # the flag's path calls a method of its own class, which calls FlashInfer's trtllm-gen ragged
    # prefill through `import flashinfer`
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/attn.py": """
        from eng.plat import is_sm100

        class Attn:
            def plan(self, n):
                self.use_mha = is_sm100() and n < 4096

            def forward(self, q, k, v):
                if self.use_mha:
                    return self._ragged(q, k, v)
                return self._paged(q, k, v)

            def _ragged(self, q, k, v):
                import flashinfer

                return flashinfer.prefill.trtllm_ragged_attention_deepseek(q, k, v)
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/attn.py", 5)]
    assert "trtllm_ragged_attention_deepseek" in found[0].consequence


def test_a_default_the_engine_s_own_check_demands_on_the_target_is_high(tmp_path: Path) -> None:
    # the siblings get "triton" as the default of a setting; an assert elsewhere demands "triton"
    # on every GPU of major 10 or 12: the target, left to the general default, fails it
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM
            + """
    def is_blackwell():
        return torch.cuda.get_device_capability()[0] in (10, 12)
""",
            "eng/args.py": """
        from eng.plat import is_sm100

        class Args:
            def resolve(self, arch):
                if arch == "hybrid":
                    self._fill(arch, default_backend="triton")

            def _fill(self, arch, default_backend=None):
                if is_sm100() and self.attention_backend is None and default_backend is not None:
                    self.attention_backend = default_backend
                    print(arch)
    """,
            "eng/registry.py": """
        from eng.plat import is_blackwell

        def wrap(runner):
            if runner.hybrid is not None:
                if is_blackwell():
                    assert runner.args.attention_backend == "triton", "use triton"
            return runner
    """,
        },
    )
    args = [f for f in found if f.path == "eng/args.py"]
    assert _brief(args) == [("gate-excludes-arch", "high", "eng/args.py", 9)]
    assert "eng/registry.py:5 demands 'triton' of attention_backend" in args[0].consequence


def test_a_default_no_check_demands_stays_medium(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        {
            "eng/plat.py": _PLATFORM,
            "eng/args.py": """
        from eng.plat import is_sm100

        class Args:
            def resolve(self, arch):
                if arch == "hybrid":
                    self._fill(arch, default_backend="triton")

            def _fill(self, arch, default_backend=None):
                if is_sm100() and self.attention_backend is None and default_backend is not None:
                    self.attention_backend = default_backend
                    print(arch)
    """,
        },
    )
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/args.py", 9)]
