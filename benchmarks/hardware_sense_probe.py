"""Check `capgap fix`'s hardware sense against a real GPU host: what the probe reports, and the
warnings a multimem entry and an oversized max-size entry get there (run on the GPU machine:
`PYTHONPATH=src python3 benchmarks/hardware_sense_probe.py`)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

# Load capgap.semantic.hardware without the package __init__ (which needs libcst, maybe absent).
path = Path(__file__).resolve().parents[1] / "src" / "capgap" / "semantic" / "hardware.py"
spec = importlib.util.spec_from_file_location("capgap_semantic_hardware", path)
assert spec and spec.loader
hardware = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = hardware
spec.loader.exec_module(hardware)

from capgap.arch import parse_arch  # noqa: E402

machine = hardware.probed_machine()
checks = {
    "multimem 9.0 [4, 6, 8]": hardware.check_entry("C._WORLD_SIZES_MULTIMEM", parse_arch("9.0"), "[4, 6, 8]",
                                                   machine=machine),
    "multimem 12.0 [6, 8]": hardware.check_entry("C._WORLD_SIZES_MULTIMEM", parse_arch("12.0"), "[6, 8]",
                                                 machine=machine),
    "max size 9.0 {2: 200 GiB}": hardware.check_entry("MAX_SIZES", parse_arch("9.0"), "{2: 200 * GiB}",
                                                      module_source="GiB = 1 << 30\n", machine=machine),
    "max size 9.0 {2: 64 MiB}": hardware.check_entry("MAX_SIZES", parse_arch("9.0"), "{2: 64 * MiB}",
                                                     module_source="MiB = 1 << 20\n", machine=machine),
}
print(json.dumps({"machine": machine.__dict__, "warnings": checks}, indent=1))
