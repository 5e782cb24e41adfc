"""A chain that only folds a family into one capability key before a lookup (vLLM's sequence
parallelism: `if family(100): device_capability = 100 else: device_capability = cap.to_int()`)
chooses no path: the target keeps its own key, and what the table lacks is the table's finding."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_BUCKET = """
from vllm.platforms import current_platform

SP_MIN_HIDDEN_SIZE = {{90: 8192, 100: 8192}}


def min_size():
    capability = current_platform.get_device_capability()
    if current_platform.is_device_capability_family(100):
        device_capability = {folded}
    else:
        device_capability = capability.to_int()
    return SP_MIN_HIDDEN_SIZE.get(device_capability)
"""


def test_folding_a_family_into_one_key_is_no_gate(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/sp.py": _BUCKET.format(folded="100")}, arch="12.0")
    assert [f for f in found if f.rule == "gate-excludes-arch"] == []


def test_sending_the_target_to_another_archs_value_is_still_a_gate(tmp_path: Path) -> None:
    # a chain whose arms are all constants gives 12.0 some other GPU's key: no bucket of its own
    source = _BUCKET.format(folded="100").replace("capability.to_int()", "90")
    found = _scan(tmp_path, {"eng/sp.py": source}, arch="12.0")
    assert "gate-excludes-arch" in {f.rule for f in found}
