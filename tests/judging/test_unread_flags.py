"""A flag a gate sets on an object that nothing in the tree reads guards nothing (exllamav3's
vendored fla `DeviceKind.hopper`, beside the `blackwell` its kernels read): low, with
`extra.unread`; read anywhere (`dev.hopper`, `getattr(dev, "hopper")`), it stays a loss."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_KIND = """
import torch

_SHARED_MEM = {"hopper": 232448, "ampere": 166912}


class DeviceKind:
    def __init__(self, idx):
        p = torch.cuda.get_device_properties(idx)
        self.hopper = p.major == 9
        self.blackwell = p.major in (10, 12)
"""

_READER = """
from eng.kind import DeviceKind


def warps(idx):
    dev = DeviceKind(idx)
    return 2 if {read} else 4
"""


def test_a_flag_nothing_reads_guards_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/kind.py": _KIND, "eng/run.py": _READER.format(read="dev.blackwell")})
    hopper = [f for f in found if "self.hopper" in f.message]
    assert _brief(hopper) == [("gate-excludes-arch", "low", "eng/kind.py", 9)]
    assert hopper[0].extra["unread"] == "self.hopper"


def test_a_flag_read_elsewhere_stays_a_loss(tmp_path: Path) -> None:
    for read in ("dev.hopper", 'getattr(dev, "hopper")'):
        root = tmp_path / str(len(read))
        found = _scan(root, {"eng/kind.py": _KIND, "eng/run.py": _READER.format(read=read)})
        hopper = [f for f in found if "self.hopper" in f.message]
        assert _brief(hopper) == [("gate-excludes-arch", "medium", "eng/kind.py", 9)], read
