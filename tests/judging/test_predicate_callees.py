"""A predicate a gate calls is no module its path runs: `utils.is_sm100_supported`, imported from a
module the scan kept no facts of, says by its name which GPU it asks about, not that the guarded
code needs tcgen05 (issue 14, point 6: no evidence, no expected)."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.callees import Callees

from .test_decisions import _scan

_MODEL = """
from eng.utils import is_sm100_supported

class DecoderLayer:
    def __init__(self, config):
        self.use_fanout = is_sm100_supported() and not config.batch_invariant
        self.norm = RMSNorm(config.hidden_size)

    def forward(self, x):
        return fanout(x) if self.use_fanout else x
"""

_UTILS = """
import torch

def is_sm100_supported(device=None):
    return torch.cuda.get_device_capability(device)[0] == 10
"""


def test_a_predicate_named_for_an_arch_is_no_evidence_of_what_the_path_needs(tmp_path: Path) -> None:
    files = {
        "eng/models/gemma.py": _MODEL,
        # a package whose __init__ only re-exports: the scan keeps no facts of it
        "eng/utils/__init__.py": "from eng.utils.common import *\n",
        "eng/utils/common.py": _UTILS,
    }
    found = _scan(tmp_path, files, arch="12.0")
    gates = [f for f in found if f.path == "eng/models/gemma.py"]
    assert [(f.rule, f.severity) for f in gates] == [("gate-excludes-arch", "medium")]


def test_an_unread_module_named_for_an_arch_is_still_evidence_its_predicate_is_not() -> None:
    callees = Callees([])
    needs, where, _ = callees.needs(["eng.kernels.fanout_sm100.run_fanout"])
    assert needs == [("tcgen05",)] and "'sm100' in the module's path" in where[0]
    assert callees.needs(["eng.utils.is_sm100_supported"])[0] == []
    assert callees.needs(["eng.kernels.fanout_sm100.is_fanout_supported"])[0] == [("tcgen05",)]
