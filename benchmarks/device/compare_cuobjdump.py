#!/usr/bin/env python3
"""Compare capgap's kernel-image reader with cuobjdump on every CUDA library of this machine.

usage: PYTHONPATH=src python3 benchmarks/device/compare_cuobjdump.py OUT_DIR [--budget-s 200]

For torch's libraries (libtorch_cuda.so ...), NCCL, and every other shared object with CUDA
kernels under site-packages, runs `cuobjdump --list-elf` and `--list-ptx` and capgap's reader,
and writes to OUT_DIR:
  agreement.md                  summary + one arch-by-arch table per library
  agreement.json                the same, with timings and capgap's verdicts for this GPU's arch
  cuobjdump_listings.tar.gz     the raw listings (to become recorded test fixtures)
Needs: cuobjdump (PATH or /usr/local/cuda/bin) and pyelftools (pure Python: if it is not
installed, a pyelftools-*.whl in ./.whl or beside this script is put on sys.path as is).
Starts no cuobjdump run after --budget-s seconds (default 140) and kills any still running 60 s
later, so the whole run ends well inside 4 minutes; libraries cut off that way are listed as not
compared (a timed-out listing shows as a disagreement with a "timeout" note in the JSON).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def need_pyelftools() -> None:
    if importlib.util.find_spec("elftools") is not None:
        return
    for wheel in sorted([*(REPO / ".whl").glob("pyelftools-*.whl"), *HERE.glob("pyelftools-*.whl")]):
        sys.path.insert(0, str(wheel))  # a pure-Python wheel imports straight from the zip
        if importlib.util.find_spec("elftools") is not None:
            print(f"using pyelftools from {wheel}")
            return
    sys.exit(
        "NEEDS pyelftools: not installed and no pyelftools-*.whl in .whl/ or benchmarks/device/.\n"
        "  here: python3 -m pip download --no-deps --only-binary=:all: -d .whl pyelftools==0.33\n"
        "  then carry .whl (the script puts the wheel on sys.path itself)."
    )


def find_cuobjdump() -> str:
    for c in (shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"):
        if c and os.access(c, os.X_OK):
            return c
    sys.exit(
        "NEEDS cuobjdump: not on PATH nor /usr/local/cuda/bin "
        "(install the CUDA toolkit or the nvidia-cuda-cuobjdump wheel)"
    )


def site_dirs() -> list[Path]:
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    dirs += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    out: list[Path] = []
    for d in dirs:
        p = Path(d).resolve()
        if p.is_dir() and p not in out and not str(p).startswith(str(REPO)):
            out.append(p)
    return out


def candidates(dirs: list[Path]) -> list[Path]:
    from capgap.binaries.reader import is_candidate

    seen: set[tuple[int, int]] = set()
    out = []
    for d in dirs:
        for dirpath, dirnames, filenames in os.walk(d):
            dirnames[:] = [n for n in dirnames if n != "__pycache__"]
            for fn in filenames:
                p = Path(dirpath) / fn
                if not is_candidate(p) or p.is_symlink():
                    continue
                st = p.stat()
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    out.append(p)
    return out


def priority(p: Path) -> tuple[int, int]:
    """torch's libraries and NCCL first, then the biggest: the budget cuts the tail."""
    s = str(p)
    first = 0 if "libtorch_cuda" in s else 1 if "nccl" in s else 2 if "/torch/" in s else 3
    return first, -p.stat().st_size


def run_cuobjdump(exe: str, path: Path, hard_end: float) -> dict[str, object]:
    out: dict[str, object] = {}
    t = time.perf_counter()
    for flag in ("--list-elf", "--list-ptx"):
        limit = max(5.0, hard_end - time.perf_counter())
        try:
            proc = subprocess.run([exe, flag, str(path)], capture_output=True, text=True, timeout=limit)
            out[flag] = proc.stdout
            out[flag + " stderr"] = proc.stderr.strip()[-500:]
        except subprocess.TimeoutExpired:
            out[flag] = ""
            out[flag + " stderr"] = f"timeout after {limit:.0f} s"
    out["seconds"] = time.perf_counter() - t
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--budget-s", type=float, default=140.0, help="start no cuobjdump run after this")
    args = ap.parse_args()
    start = time.perf_counter()
    need_pyelftools()
    exe = find_cuobjdump()
    from capgap.binaries.compat import judge
    from capgap.binaries.crosscheck import capgap_listing, compare, markdown, parse_listing
    from capgap.binaries.reader import UnreadableBinary, read_binary

    cc = os.environ.get("CAPGAP_DEVICE_CC", "9.0")  # the H200 this runs on
    major, minor = (int(x) for x in cc.split("."))
    dirs = site_dirs()
    print(f"cuobjdump: {exe}; site dirs: {', '.join(map(str, dirs))}", flush=True)
    libs = []
    for p in candidates(dirs):
        t = time.perf_counter()
        try:
            binary = read_binary(p)
        except UnreadableBinary as exc:
            print(f"capgap cannot read {p}: {exc}", flush=True)
            continue
        if binary is not None and binary.format in ("elf", "cubin", "fatbin") and binary.entries:
            libs.append((p, binary, time.perf_counter() - t))
    libs.sort(key=lambda item: priority(item[0]))
    print(
        f"{len(libs)} binaries with CUDA images; capgap read them all in {time.perf_counter() - start:.1f} s",
        flush=True,
    )

    deadline = start + args.budget_s
    hard_end = deadline + 60
    jobs = max(1, min(8, (os.cpu_count() or 2) - 1))

    def one(item):  # noqa: ANN001, ANN202
        if time.perf_counter() > deadline:
            return None
        return run_cuobjdump(exe, item[0], hard_end)

    with ThreadPoolExecutor(jobs) as pool:
        listings = list(pool.map(one, libs))

    args.out.mkdir(parents=True, exist_ok=True)
    report, sections, tar_buf = [], [], io.BytesIO()
    with tarfile.open(fileobj=tar_buf, mode="w:gz") as tar:
        for (path, binary, capgap_s), listing in zip(libs, listings, strict=True):
            rel = next((str(path.relative_to(d)) for d in dirs if path.is_relative_to(d)), str(path))
            row: dict[str, object] = {"library": rel, "size": binary.size, "capgap_s": round(capgap_s, 4)}
            verdict = judge(binary.modules(), major, minor)
            row[f"capgap_verdict_{cc}"] = verdict.to_json()
            if listing is None:
                row["compared"] = False
                report.append(row)
                continue
            text = str(listing["--list-elf"]) + str(listing["--list-ptx"])
            data = text.encode()
            info = tarfile.TarInfo(rel.replace("/", "__") + ".cuobjdump.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
            agreement = compare(parse_listing(text), capgap_listing(binary))
            row.update(
                compared=True,
                cuobjdump_s=round(float(listing["seconds"]), 3),
                cuobjdump_images=len(parse_listing(text)),
                capgap_images=len(capgap_listing(binary)),
                cuobjdump_stderr=[listing["--list-elf stderr"], listing["--list-ptx stderr"]],
                agreement=agreement.to_json(),
            )
            report.append(row)
            sections.append(markdown(rel, agreement))
    (args.out / "cuobjdump_listings.tar.gz").write_bytes(tar_buf.getvalue())

    compared = [r for r in report if r["compared"]]
    agreeing = [r for r in compared if r["agreement"]["agree"]]  # type: ignore[index]
    head = [
        f"# capgap reader vs cuobjdump ({exe})",
        "",
        f"{len(agreeing)} of {len(compared)} libraries agree arch by arch; "
        f"{len(report) - len(compared)} not compared (time budget). Verdict column: capgap for cc {cc}.",
        "",
        "| library | MB | cuobjdump images | capgap images | agree | capgap s | cuobjdump s | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report:
        v = r[f"capgap_verdict_{cc}"]["text"]  # type: ignore[index]
        mb = f"{int(r['size']) / 1e6:.1f}"  # type: ignore[call-overload]
        if r["compared"]:
            ok = "yes" if r["agreement"]["agree"] else "NO"  # type: ignore[index]
            counts = f"{r['cuobjdump_images']} | {r['capgap_images']}"
            head.append(
                f"| {r['library']} | {mb} | {counts} | {ok} | {r['capgap_s']} | {r['cuobjdump_s']} | {v} |"
            )
        else:
            head.append(f"| {r['library']} | {mb} | - | - | not compared | {r['capgap_s']} | - | {v} |")
    (args.out / "agreement.md").write_text("\n".join(head) + "\n\n" + "\n".join(sections))
    (args.out / "agreement.json").write_text(
        json.dumps({"cuobjdump": exe, "cc": cc, "python": sys.version, "libraries": report}, indent=1)
    )
    print("\n".join(head), flush=True)
    print(f"total {time.perf_counter() - start:.1f} s", flush=True)
    return 0 if len(agreeing) == len(compared) else 1


if __name__ == "__main__":
    sys.exit(main())
