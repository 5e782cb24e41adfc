"""An eligibility check that turns the target away reads what the kernels its module drives need
(issue 14, "a need only with evidence"): FlashInfer's `kda_prefill_cute.py` checks
`get_compute_capability(q.device) not in {(10, 0), (10, 3)}`, then its run function imports
`kda_kernels/kda_chunked_bt16.py`, a CuTe-DSL kernel built on tcgen05 and TMEM."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_ADAPTER = """
import torch

_SUPPORTED_COMPUTE_CAPABILITIES = {{(10, 0), (10, 3)}}


def _is_prefill_eligible(q):
    if q.ndim != 4:
        return False
    if torch.cuda.get_device_capability(q.device) not in _SUPPORTED_COMPUTE_CAPABILITIES:
        return False
    return _runtime_available()


def _runtime_available():
    try:
        import cutlass  # noqa: F401
    except ImportError:
        return False
    return True


def _run_prefill(q):
{imports}
    return compile_kernel(q)
"""

_CALLER = """
from . import kda_cute


def prefill(q):
    if kda_cute._is_prefill_eligible(q):
        return kda_cute._run_prefill(q)
    return q
"""

_KERNEL = '''
"""{doc}"""
import cutlass.cute as cute
{imports}


@cute.kernel
def chunked_kernel(a, b):
    pass
'''

# (what a kernel module's imports and code spell: its docstring is no code)
_TCGEN05 = ("The state lives in TMEM.", "from cutlass.cute.nvgpu import tcgen05")
_PORTABLE = ("A plain mma.sync tile loop.", "from cutlass.cute.nvgpu import warp")


def _found(tmp_path: Path, **kernels: tuple[str, str]) -> list:
    imports = "\n".join(f"    from .kda_kernels.{name} import compile_kernel" for name in kernels)
    files = {"eng/kda_cute.py": _ADAPTER.format(imports=imports), "eng/kda.py": _CALLER}
    files.update(
        {
            f"eng/kda_kernels/{name}.py": _KERNEL.format(doc=doc, imports=imp)
            for name, (doc, imp) in kernels.items()
        }
    )
    return [f for f in _scan(tmp_path, files) if f.path.endswith("kda_cute.py")]


def test_the_kernels_an_adapter_drives_say_what_its_refusal_keeps_out(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, bt16=_TCGEN05)
    assert found.severity == "low"
    assert "every kernel module eng/kda_cute.py drives (bt16.py) needs it" in found.consequence


def test_a_portable_kernel_it_drives_leaves_the_refusal_a_gap(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, bt16=_TCGEN05, bt16_simt=_PORTABLE)
    assert found.severity == "medium"


def test_a_kernel_named_for_the_target_among_them_is_no_evidence(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, bt16=_TCGEN05, sm120_prefill=_TCGEN05)
    assert found.severity == "medium"


_ROPE_API = """
import torch

from .frost.{kernel} import tail_rope_kernel


class TailRope:
    def check_support(self):
        self._capability = torch.cuda.get_device_capability()
        if self._capability != (10, 0):
            raise NotImplementedError("Frost tail RoPE currently supports SM100")
        return True
"""


def _rope(tmp_path: Path, kernel: str, imports: str) -> list:
    files = {
        "eng/rope/tail.py": _ROPE_API.format(kernel=kernel),
        f"eng/rope/frost/{kernel}.py": _KERNEL.format(doc="Tail RoPE.", imports=imports),
    }
    return [f for f in _scan(tmp_path, files) if f.path.endswith("rope/tail.py")]


def test_a_refusal_in_words_over_portable_driven_kernels_is_no_evidence(tmp_path: Path) -> None:
    # cuDNN 1.32's rope/tail.py: "currently supports SM100" is what it allows, not what it needs;
    # the kernel it imports is SIMT CuTe DSL code (judged a medium gap)
    (found,) = _rope(tmp_path, "tail", "from cutlass.cute.nvgpu import warp")
    assert found.severity == "medium"
    assert "the kernels read (@cute.kernel code (line " in found.consequence
    assert "of tail.py) use no tcgen05" in found.consequence


def test_a_refusal_in_words_over_tcgen05_driven_kernels_stays_expected(tmp_path: Path) -> None:
    (found,) = _rope(tmp_path, "tail", "from cutlass.cute.nvgpu import tcgen05")
    assert found.severity == "low"


def test_a_module_that_imports_kernels_by_name_may_run_others(tmp_path: Path) -> None:
    # cuDNN's QSA/indexed/api.py imports a small metadata kernel, and its main kernel by name:
    # `importlib.import_module(f"cudnn.QSA.kernels.{direction}_sm100")`
    api = _ROPE_API.format(kernel="tail").replace(
        "        return True\n",
        '        self.impl = importlib.import_module(f"eng.rope.kernels.{self.direction}_sm100")\n'
        "        return True\n",
    )
    files = {
        "eng/rope/tail.py": "import importlib\n" + api,
        "eng/rope/frost/tail.py": _KERNEL.format(
            doc="Metadata.", imports="from cutlass.cute.nvgpu import warp"
        ),
    }
    (found,) = [f for f in _scan(tmp_path, files) if f.path.endswith("rope/tail.py")]
    assert found.severity == "low"
