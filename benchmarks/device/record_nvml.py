"""Record every raw NVML answer `capgap probe` uses, on a GPU machine, as a test fixture.

    PYTHONPATH=src python3 benchmarks/device/record_nvml.py OUT.json

Runs the probe's own parsing through a recording backend, so the file holds exactly the questions
the probe asks; tests replay it (tests/probe/test_nvml_replay.py). Needs only nvidia-ml-py.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
from pathlib import Path

from capgap.probe.gpus import machine_from_nvml
from capgap.probe.nvml_backend import LiveNvml, RecordingNvml


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    recorder = RecordingNvml(LiveNvml())
    try:
        machine = machine_from_nvml(recorder)
    finally:
        recorder.close()
    try:
        from importlib.metadata import version

        pynvml_version = version("nvidia-ml-py")
    except Exception:  # the recording is still useful without it
        pynvml_version = None
    meta = {
        "hand_made": False,
        "note": "Recorded by benchmarks/device/record_nvml.py on a real machine.",
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": {"platform": platform.platform(), "python": platform.python_version()},
        "nvidia_ml_py": pynvml_version,
        "parsed": machine.to_json(),  # what the probe made of it then, for a human reader
    }
    recorder.dump(out, meta)
    print(json.dumps(machine.to_json(), indent=2))
    print(f"wrote {len(recorder.answers)} answers to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
