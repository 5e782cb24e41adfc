"""How long `capgap --help` / `capgap --version` take to start, side by side with `python -c pass`.

    python benchmarks/startup.py [-n 15]

Target: under 150 ms for `capgap --help`. Runs each command N times as a subprocess, interleaved
so machine load hits all of them alike, and prints the median, the spread and the ratio to bare
Python and to `import typer` alone (the floor for a typer CLI). Uses `python -m capgap`, so it
measures this checkout with the interpreter running it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
TARGET_MS = 150.0


def _time_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs per command (default 15)")
    args = parser.parse_args()
    import os

    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        # The floor for any typer CLI: what capgap adds on top of it is its own start-up cost.
        "import typer": [sys.executable, "-c", "import typer"],
        "capgap --version": [sys.executable, "-m", "capgap", "--version"],
        "capgap --help": [sys.executable, "-m", "capgap", "--help"],
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the file cache
        _time_once(argv, env)
    for _ in range(args.n):
        for name, argv in commands.items():
            samples[name].append(_time_once(argv, env))
    base = statistics.median(samples["python -c pass"])
    floor = statistics.median(samples["import typer"])
    print(f"python {sys.version.split()[0]} ({sys.executable}), {args.n} runs each")
    print(f"{'command':<18} {'median ms':>9} {'min':>7} {'max':>7} {'x python':>9} {'x typer':>8}")
    for name, values in samples.items():
        med = statistics.median(values)
        spread = f"{min(values):7.1f} {max(values):7.1f}"
        print(f"{name:<18} {med:9.1f} {spread} {med / base:9.2f} {med / floor:8.2f}")
        if max(values) > 2 * min(values):
            print(f"  warning: {name} varied more than 2x (machine busy?)")
    help_ms = statistics.median(samples["capgap --help"])
    verdict = "within" if help_ms < TARGET_MS else "OVER"
    print(f"capgap --help: {help_ms:.1f} ms, {verdict} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
