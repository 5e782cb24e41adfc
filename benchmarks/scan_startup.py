"""The fixed start-up cost of `capgap scan`: a one-file tree, side by side with another checkout.

    python benchmarks/scan_startup.py [-n 15] [--against OTHER_VENV_PYTHON]

Times, as subprocesses interleaved so machine load hits all of them alike: `python -c pass`,
`capgap --help`, and `capgap scan ONE_FILE_TREE --arch 12.0 --no-cache --format json` (everything
`scan` costs that does not grow with the target). `--against` adds the same two capgap commands
run by another interpreter (e.g. main's venv: its editable install is the other checkout) and
prints this checkout's median over the other's. Byte-code caching is left on (a user's install
has .pyc files), whatever PYTHONDONTWRITEBYTECODE says in the calling shell.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - start) * 1000


def _commands(python: str, tree: str, tag: str) -> dict[str, list[str]]:
    scan = [python, "-m", "capgap", "scan", tree, "--arch", "12.0", "--no-cache", "--format", "json"]
    return {f"capgap --help{tag}": [python, "-m", "capgap", "--help"], f"capgap scan 1 file{tag}": scan}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--against", help="another interpreter whose `-m capgap` is the baseline")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.py").write_text("x = 1\n")
        env["CAPGAP_CACHE_DIR"] = str(Path(tmp) / "cache")
        commands = {"python -c pass": [sys.executable, "-c", "pass"], **_commands(sys.executable, tmp, "")}
        if args.against:
            commands.update(_commands(args.against, tmp, " (other)"))
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():  # warm the file cache and write byte code
            _time_once(argv, env)
        for _ in range(args.n):
            for name, argv in commands.items():
                samples[name].append(_time_once(argv, env))
    print(f"python {sys.version.split()[0]} ({sys.executable}), {args.n} runs each")
    print(f"{'command':<30} {'median ms':>9} {'min':>7} {'max':>7}")
    for name, values in samples.items():
        print(f"{name:<30} {statistics.median(values):9.1f} {min(values):7.1f} {max(values):7.1f}")
    if args.against:
        for name in _commands(sys.executable, "", ""):
            ratio = statistics.median(samples[name]) / statistics.median(samples[f"{name} (other)"])
            print(f"{name}: this checkout / other = {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
