"""A module that tests no capability but says in its docstring that it multicasts is still read
for what its callers' paths need (reading.tokens.KERNEL_TOKENS)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_CALLER = """
import torch

from eng.comm.gather import reserve_workspace


def setup(comm, n):
    if torch.cuda.get_device_capability() == (10, 3):
        reserve_workspace(comm, n)
"""

_GATHER = '''
"""All-gather that multicast-stores each slice into every peer's workspace."""


def reserve_workspace(comm, n):
    comm.reserve(n)
'''

_PLAIN = '''
"""All-gather through peer-to-peer copies."""


def reserve_workspace(comm, n):
    comm.reserve(n)
'''


def test_a_path_whose_callee_multicasts_is_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/setup.py": _CALLER, "eng/comm/gather.py": _GATHER})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/setup.py", 7)]
    assert "multicast" in found[0].extra["evidence"]


def test_a_path_whose_callee_states_nothing_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/setup.py": _CALLER, "eng/comm/gather.py": _PLAIN})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/setup.py", 7)]
