"""gate-admits-unsupported through a flag: `self.supports_prefill = _is_blackwell()` (major >= 10)
in `__init__`, then `if not self.supports_prefill: raise` and an import of tcgen05 kernels in
another method (sglang 0.5.17-0.5.22's CuTe KDA prefill, judged a gap in four held-out sets). The
kernels may sit in the modules of a package whose `__init__` defines the name imported."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_KERNEL = """
import torch


def _is_blackwell():
    return torch.cuda.get_device_capability()[0] {test}


class KdaKernel:
    def __init__(self):
        self.supports_prefill = _is_blackwell()
        self._extend = None

    def _ensure_extend_loaded(self):
        if not self.supports_prefill:
            raise RuntimeError("CuTe DSL KDA prefill requires SM100+ (Blackwell)")
        from eng.ops.kda_blackwell import chunk_kda

        self._extend = chunk_kda

    def extend(self, x):
        self._ensure_extend_loaded()
        return self._extend(x)
"""

_PACKAGE = {
    "eng/ops/__init__.py": "",
    "eng/ops/kda_blackwell/__init__.py": """
from .kernel_h import kda_h


def chunk_kda(x):
    return kda_h(x)
""",
    "eng/ops/kda_blackwell/kernel_h.py": """
import cutlass.cute as cute
from eng.ops.ptx import tcgen05 as _tcgen05


@cute.kernel
def kda_h(x):
    _tcgen05.alloc(x)
""",
}


def test_a_flag_whose_guard_admits_the_target_into_tcgen05_kernels_is_reported(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/kda.py": _KERNEL.format(test=">= 10"), **_PACKAGE})
    admits = [f for f in found if f.rule == "gate-admits-unsupported"]
    assert _brief(admits) == [("gate-admits-unsupported", "medium", "eng/kda.py", 10)]
    assert "imported past `if not self.supports_prefill:`" in admits[0].extra["evidence"]
    assert "eng.ops.kda_blackwell" in admits[0].extra["evidence"]


def test_a_flag_that_keeps_the_target_out_admits_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/kda.py": _KERNEL.format(test="== 10"), **_PACKAGE})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []


def test_a_tab_indented_guard_reads_its_block_as_a_space_indented_one_does() -> None:
    from capgap.judging.flagguards import read

    spaced = _KERNEL.format(test=">= 10")
    tabbed = spaced.replace("        ", "\t\t").replace("    ", "\t")
    assert "\t\tif not self.supports_prefill:" in tabbed
    assert read(spaced, "eng.kda", False) == {"supports_prefill": ("eng.ops.kda_blackwell.chunk_kda",)}
    assert read(tabbed, "eng.kda", False) == read(spaced, "eng.kda", False)
