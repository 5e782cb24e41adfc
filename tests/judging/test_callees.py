"""Evidence read in the modules a path calls into: the kernels it runs live there (judging.callees).
A kernel module that tests no capability is still read for what it needs."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.callees import Callees, import_map, reached
from capgap.judging.records import FileFacts
from tests.judging.test_decisions import _brief, _scan

_CALLER = """
import torch


def _run_router(model):
    from eng.kernels.router_gemm import run

    run(model)


def route(model):
    if torch.cuda.get_device_capability()[0] == 10:
        _run_router(model)
"""

_TCGEN05 = '''
"""Router GEMM accumulating in TMEM."""
import cutlass
from cutlass.cute.nvgpu import tcgen05


def run(model):
    return tcgen05
'''

_TRITON = """
import triton


@triton.jit
def _router_kernel(x):
    pass


def run(model):
    return _router_kernel
"""


def test_a_path_whose_callee_imports_tcgen05_is_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _CALLER, "eng/kernels/router_gemm.py": _TCGEN05})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/router.py", 11)]
    assert found[0].extra["evidence"] == (
        "'tcgen05' imported at line 3 in eng.kernels.router_gemm, which it calls"
    )


def test_a_path_whose_callee_runs_portable_kernels_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _CALLER, "eng/kernels/router_gemm.py": _TRITON})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 11)]
    assert (
        found[0].extra["evidence"].startswith("its own @triton.jit code (line 4) in eng.kernels.router_gemm")
    )
    assert "need nothing 12.0 lacks" in found[0].consequence


def test_without_the_callee_module_the_path_is_judged_as_before(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/router.py": _CALLER})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/router.py", 11)]
    assert "evidence" not in found[0].extra


def test_a_callee_path_named_for_its_arch_is_evidence_without_its_file(tmp_path: Path) -> None:
    caller = """
    import torch

    from eng.third_party.fmha_sm100.api import plan


    def decode(q):
        if torch.cuda.get_device_capability()[0] == 10:
            return plan(q)
        return None
    """
    found = _scan(tmp_path, {"eng/decode.py": caller})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/decode.py", 7)]
    assert "fmha_sm100" in found[0].extra["evidence"]


def test_import_map_reads_every_form() -> None:
    text = (
        "import os, numpy as np\n"
        "from . import sib\n"
        "from ..up import (\n    a,  # note\n    b as c,\n)\n"
        "def f():\n    from x.y import z\n"
    )
    got = import_map(text, "pkg.sub.mod", is_package=False)
    assert got == {
        "os": "os",
        "np": "numpy",
        "sib": "pkg.sub.sib",
        "a": "pkg.up.a",
        "c": "pkg.up.b",
        "z": "x.y.z",
    }


def test_reached_follows_one_level_of_the_files_own_functions() -> None:
    lines = [
        "from k.gemm import run",
        "def helper():",
        "    from k.other import go",
        "    return go()",
        "def caller():",
        "    return helper()",
    ]
    text = "\n".join(lines)
    imports = import_map(text, "m", is_package=False)
    assert reached("run(x)", imports, lines, text, "m", False) == ("k.gemm.run",)
    assert reached("helper()", imports, lines, text, "m", False) == ("k.other.go",)


def test_callees_resolve_a_name_to_the_module_that_holds_it() -> None:
    kern = FileFacts("k/gemm.py", "k.gemm", needs=[("tcgen05",)], needs_from=["'tcgen05' imported at line 1"])
    needs, where, kernels = Callees([kern]).needs(["k.gemm.run", "other.mod"])
    assert needs == [("tcgen05",)]
    assert where == ["'tcgen05' imported at line 1 in k.gemm, which it calls"]
    assert kernels == ""


def test_a_kernel_entry_two_own_calls_away_and_named_for_what_it_runs_is_evidence(tmp_path: Path) -> None:
    files = {
        "eng/gemm.py": """
        import torch

        from eng.jit.gemm import gen_trtllm_gen_gemm_module

        def _runner():
            return _module().runner()

        def _module():
            return gen_trtllm_gen_gemm_module()

        def mm(a, b):
            major, _ = torch.cuda.get_device_capability()
            if major == 10:
                return _runner()(a, b)
            raise ValueError("unsupported GPU")
        """,
        "eng/jit/gemm.py": """
        def gen_trtllm_gen_gemm_module():
            return load("gemm")
        """,
    }
    found = [f for f in _scan(tmp_path, files) if f.path == "eng/gemm.py"]
    assert [f.severity for f in found] == ["low"]
    assert "gen_trtllm_gen_gemm_module" in found[0].extra["evidence"]


def test_callees_of_an_own_function_come_from_its_first_def_spelled_with_one_space() -> None:
    lines = [
        "from k import gemm, other",
        "def  spaced(x):",  # two spaces: not a definition the arms' callees are read in
        "    return gemm.run(x)",
        "async def helper(y):",
        "    return other.go(y)",
        "def helper(y):",  # a later definition of the same name: the first one is read
        "    return gemm.run(y)",
        "x = 'def tabbed'",
        "def\ttabbed():",
        "    return gemm.run()",
    ]
    text = "\n".join(lines)
    imports = import_map(text, "m", is_package=False)
    assert reached("spaced(1)", imports, lines, text, "m", False) == ()
    assert reached("helper(1)", imports, lines, text, "m", False) == ("k.other",)
    assert reached("tabbed()", imports, lines, text, "m", False) == ()
    assert reached("helper(1)", imports, lines, text, "m", False, own="helper") == ()


def test_a_driver_module_needs_what_the_kernels_of_its_package_it_imports_need(tmp_path: Path) -> None:
    files = {
        "eng/moe/api.py": """
        import torch

        from eng.moe.tuner import MoERunner

        def fused_moe(x):
            major, _ = torch.cuda.get_device_capability()
            if major != 10:
                raise ValueError("unsupported GPU")
            return MoERunner()(x)
        """,
        "eng/moe/tuner.py": """
        import torch

        class MoERunner:
            def __call__(self, x):
                from .blackwell_kernel import GroupedGemm

                tile = 256 if torch.cuda.get_device_capability() == (10, 3) else 128
                return GroupedGemm(tile)(x)
        """,
        "eng/moe/blackwell_kernel.py": """
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import tcgen05

        class GroupedGemm:
            @cute.kernel
            def kernel(self):
                tcgen05.mma()
        """,
    }
    found = [f for f in _scan(tmp_path, files) if f.path == "eng/moe/api.py"]
    assert [f.severity for f in found] == ["low"]
    assert "eng.moe.blackwell_kernel" in found[0].extra["evidence"]
