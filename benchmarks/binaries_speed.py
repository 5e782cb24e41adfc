#!/usr/bin/env python3
"""How fast capgap reads compiled CUDA libraries, beside cuobjdump, measured in one run.

Targets (issue 6): a 300 MB library in <= 2 s; a whole environment's libraries (torch + its
NVIDIA wheels) in <= 10 s. Prints raw samples, medians and ratios; asserts nothing.

usage: PYTHONPATH=src python benchmarks/binaries_speed.py [--env DIR] [--repeat N] [--no-cuobjdump]

Without --env it pip-downloads torch and the NVIDIA CUDA wheels a torch cu13 install pulls in
(into ~/.cache/capgap-bench, once) and unpacks them side by side as one site-packages tree.
"cold" runs first evict the files from the page cache with posix_fadvise(DONTNEED) (per file,
harmless to others); "warm" runs read them again as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

WHEELS = [  # torch and the NVIDIA wheels a torch cu13 install pulls in, pinned for repeatability
    "torch==2.14.1",
    "nvidia-nccl-cu13==2.30.7",
    "nvidia-cublas==13.1.1.3",
    "nvidia-cudnn-cu13==9.24.0.43",
    "nvidia-cusparselt-cu13==0.8.1",
    "nvidia-cufft==12.0.0.61",
    "nvidia-cusparse==12.6.3.3",
    "nvidia-cusolver==12.0.4.66",
    "nvidia-curand==10.4.0.35",
    "nvidia-nvshmem-cu13==3.4.5",
    "nvidia-cuda-cupti==13.0.85",
    "nvidia-cuda-nvrtc==13.0.88",
    "nvidia-nvjitlink==13.4.92",
]
# pip matches --platform tags exactly: name every manylinux level these wheels use
_TAGS = [
    "manylinux_2_28",
    "manylinux_2_27",
    "manylinux_2_25",
    "manylinux_2_18",
    "manylinux_2_17",
    "manylinux_2_12",
]
_TAGS += ["manylinux_2_5", "manylinux2014", "manylinux2010", "manylinux1"]
PIP_PLATFORM = ["--python-version", "3.11", "--implementation", "cp"]
for _tag in _TAGS:
    PIP_PLATFORM += ["--platform", f"{_tag}_x86_64"]


@dataclass
class Measurement:
    what: str
    samples_s: list[float] = field(default_factory=list)
    target_s: float | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples_s)


def build_env(cache: Path) -> Path:
    env = cache / "env"
    if (env / ".complete").exists():
        return env
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for req in WHEELS:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "-d",
            str(wheels),
        ]
        subprocess.run([*cmd, *PIP_PLATFORM, req], check=True)
    env.mkdir(parents=True, exist_ok=True)
    for whl in sorted(wheels.glob("*.whl")):
        print(f"unpacking {whl.name}", file=sys.stderr)
        with zipfile.ZipFile(whl) as zf:
            zf.extractall(env)
    (env / ".complete").write_text("\n".join(w.name for w in sorted(wheels.glob("*.whl"))))
    return env


def evict(paths: list[Path]) -> None:
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def timed(fn, repeat: int, before=None) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(repeat):
        if before is not None:
            before()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def find_cuobjdump() -> str | None:
    import sysconfig

    wheel_bins = sorted((Path(sysconfig.get_paths()["purelib"]) / "nvidia").glob("*/bin/cuobjdump"))
    for c in (shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump", *map(str, wheel_bins)):
        if c and os.access(c, os.X_OK):
            return c
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", type=Path, help="a site-packages-like tree to audit (default: build one)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-cuobjdump", action="store_true")
    ap.add_argument("--json", type=Path, help="also write raw samples + environment here")
    args = ap.parse_args()

    from capgap.binaries.audit import audit_files
    from capgap.binaries.reader import read_binary
    from capgap.targets import iter_files, resolve_target

    env = args.env or build_env(
        Path(os.environ.get("CAPGAP_BENCH_CACHE", Path.home() / ".cache" / "capgap-bench"))
    )
    target = resolve_target(str(env))
    files = list(iter_files(target))
    libs = [f for f in files if f.name.endswith(".so") or ".so." in f.name]
    biggest = max(libs, key=lambda p: p.stat().st_size)
    size_mb = biggest.stat().st_size / 1e6
    total_mb = sum(p.stat().st_size for p in libs) / 1e6
    results: list[Measurement] = []

    def read_big() -> None:
        read_binary(biggest)

    results.append(
        Measurement(
            f"capgap read {biggest.name} ({size_mb:.0f} MB), cold",
            timed(read_big, 3, lambda: evict([biggest])),
            2.0,
        )
    )
    results.append(
        Measurement(f"capgap read {biggest.name} ({size_mb:.0f} MB), warm", timed(read_big, args.repeat), 2.0)
    )

    def audit_env() -> None:
        audit_files(iter_files(target), target.root, [(12, 0), (9, 0)])

    results.append(
        Measurement(
            f"capgap audit env: {len(files)} files, {len(libs)} .so ({total_mb:.0f} MB), cold",
            timed(audit_env, 2, lambda: evict(libs)),
            10.0,
        )
    )
    results.append(Measurement("capgap audit env, warm", timed(audit_env, args.repeat), 10.0))

    cuobjdump = None if args.no_cuobjdump else find_cuobjdump()
    if cuobjdump:

        def cuobj_big() -> None:
            subprocess.run([cuobjdump, "--list-elf", str(biggest)], capture_output=True, check=False)

        results.append(Measurement(f"cuobjdump --list-elf {biggest.name}, warm", timed(cuobj_big, 1)))
        audit = [lib.binary.path for lib in audit_files(iter_files(target), target.root, [(12, 0)]).libraries]

        def cuobj_env() -> None:
            for p in audit:
                subprocess.run([cuobjdump, "--list-elf", str(p)], capture_output=True, check=False)

        results.append(
            Measurement(
                f"cuobjdump --list-elf over the {len(audit)} libs with kernels, warm", timed(cuobj_env, 1)
            )
        )

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; env {env}")
    print(f"{'what':<78} {'median s':>9} {'min':>7} {'max':>7} {'target':>7} {'target/median':>13}")
    for m in results:
        ratio = f"{m.target_s / m.median:>12.1f}x" if m.target_s else ""
        target_txt = f"{m.target_s:.0f} s" if m.target_s else ""
        spread = f"{min(m.samples_s):>7.3f} {max(m.samples_s):>7.3f}"
        print(f"{m.what:<78} {m.median:>9.3f} {spread} {target_txt:>7} {ratio}")
        if len(m.samples_s) > 2 and max(m.samples_s) > 2 * min(m.samples_s):
            print(f"  warning: large spread in {m.what!r}: {m.samples_s}")
    by = {m.what.split(",")[0]: m for m in results}
    cuo = [m for m in results if m.what.startswith("cuobjdump --list-elf " + biggest.name)]
    if cuo:
        warm = [
            m for m in results if m.what.startswith(f"capgap read {biggest.name}") and m.what.endswith("warm")
        ][0]
        print(f"capgap is {cuo[0].median / warm.median:.0f}x faster than cuobjdump on {biggest.name}")
    del by
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "cores": os.cpu_count(),
                    "env": str(env),
                    "results": [asdict(m) for m in results],
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
