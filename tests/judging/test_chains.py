"""Chains: a table whose entry is not enough, because a feature check further on turns the path
off on the target too (`if handle.multicast_ptr == 0: return` on a GPU without NVLS multicast)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.cli_runner import run_cli

SIZES = """
    MiB = 1024 * 1024
    SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
        "9.0": {2: 64 * MiB, 4: 32 * MiB},
        "10.0": {2: 8 * MiB, 4: 32 * MiB},
        "10.7": {2: 4 * MiB, 4: 32 * MiB},
    }
"""
COMMUNICATOR = """
    import torch

    from eng.sizes import SYMM_MEM_ALL_REDUCE_MAX_SIZES


    class SymmMemCommunicator:
        def __init__(self, group, world_size):
            self.disabled = True
            capability = torch.cuda.get_device_capability()
            self.device_capability = f"{capability[0]}.{capability[1]}"
            if self.device_capability not in SYMM_MEM_ALL_REDUCE_MAX_SIZES:
                return
            self.max_size = SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.device_capability][world_size]
            handle = rendezvous(group)
            if handle.multicast_ptr == 0:
                return
            self.disabled = False
"""


def _tree(root: Path) -> Path:
    for rel, text in {"eng/sizes.py": SIZES, "eng/symm.py": COMMUNICATOR}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def test_the_table_finding_names_the_check_that_still_turns_the_path_off(tmp_path: Path) -> None:
    res = run_cli("scan", str(_tree(tmp_path)), "--arch", "12.0", "--format", "json", "--no-binaries")
    table = next(f for f in json.loads(res.out)["findings"] if f["rule"] == "table-missing-arch")
    # a key the facts do not know ("10.7") no longer hides the table
    assert table["present"] == ['"9.0"', '"10.0"', '"10.7"']
    assert table["extra"]["blockers"] == [
        {
            "path": "eng/symm.py",
            "line": 15,
            "source": "if handle.multicast_ptr == 0:",
            "why": "it needs NVLS multicast, which 12.0 lacks",
        }
    ]
    assert "adding the entry is not enough: eng/symm.py:15" in table["consequence"]


def test_a_gpu_with_multicast_has_no_blocker(tmp_path: Path) -> None:
    res = run_cli("scan", str(_tree(tmp_path)), "--arch", "10.3", "--format", "json", "--no-binaries")
    table = next(f for f in json.loads(res.out)["findings"] if f["rule"] == "table-missing-arch")
    assert "blockers" not in table["extra"]


def test_fix_says_what_still_blocks_the_table_it_fixes(tmp_path: Path) -> None:
    res = run_cli("fix", str(_tree(tmp_path)), "--arch", "12.0", "--dry-run", "--device", "RTX PRO 6000")
    assert res.code == 0, res.err
    assert '+    "12.0": {2: 8 * MiB, 4: 32 * MiB},  # copied from "10.0"' in res.out  # keyed as its siblings
    assert (
        "SYMM_MEM_ALL_REDUCE_MAX_SIZES: still off after this fix: eng/symm.py:15 "
        "`if handle.multicast_ptr == 0:` (it needs NVLS multicast, which 12.0 lacks)"
    ) in " ".join(res.err.split())


def test_a_table_the_fix_writes_too_is_no_blocker_of_it() -> None:
    """A root table's blockers name the tables keyed by what it gives; where the same fix writes
    one of them as well, it is no longer in the way."""
    from types import SimpleNamespace

    from capgap.findings import Finding
    from capgap.semantic.fixrun import _blockers

    def blocker(source: str) -> dict[str, object]:
        return {"path": "eng/jit.py", "line": 3, "source": source, "why": "keyed by what _ARCH gives"}

    root = Finding(
        rule="table-missing-arch", severity="medium", path="eng/jit.py", line=4, symbol="_ARCH",
        present=("10.0",), missing="12.0", consequence="", message="", arch="12.0", source="",
        extra={"blockers": [blocker("_FLAGS"), blocker("_BANDS")]},
    )  # fmt: skip
    entry = lambda symbol: SimpleNamespace(edit=SimpleNamespace(path="eng/jit.py", symbol=symbol))  # noqa: E731
    plan = SimpleNamespace(entries=[entry("_ARCH"), entry("_FLAGS")])
    assert [b["source"] for b in _blockers([root], plan)] == ["_BANDS"]  # type: ignore[arg-type]
