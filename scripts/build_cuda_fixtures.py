#!/usr/bin/env python3
"""Build small CUDA fixture binaries with nvcc for capgap's binary-audit tests.

usage: build_cuda_fixtures.py OUT_DIR [--nvcc PATH] [--only NAME ...]

Each fixture compiles the same tiny kernel for one -gencode combination. Shared libraries link
the CUDA runtime dynamically (-cudart shared) so they stay a few tens of kB. Prints one line per
fixture; exits 2 when nvcc is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL = r"""
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" void launch_axpy(float a, const float* x, float* y, int n) {
  axpy<<<(n + 255) / 256, 256>>>(a, x, y, n);
}
"""

HOST_ONLY = "int plain_c_function(int x) { return 2 * x; }\n"
# a .cu file with device code but no kernel: nvcc still embeds (empty) modules
NO_KERNELS = "__device__ int twice(int x) { return 2 * x; }\nint host_side(int x) { return x + 1; }\n"


def g(arch: str, code: str) -> list[str]:
    return ["-gencode", f"arch={arch},code={code}"]


# name -> (output kind, nvcc flags). "so": shared library, "cubin" / "fatbin": bare files.
FIXTURES: dict[str, tuple[str, list[str]]] = {
    "sass_only.so": ("so", g("compute_80", "sm_80") + g("compute_90", "sm_90")),
    "ptx_only.so": ("so", g("compute_80", "compute_80")),
    "sm90a.so": ("so", g("compute_90a", "sm_90a")),
    "sm100f.so": ("so", g("compute_100f", "[sm_100f,compute_100f]")),
    "multi.so": (
        "so",
        g("compute_80", "sm_80")
        + g("compute_90a", "sm_90a")
        + g("compute_100f", "sm_100f")
        + g("compute_120", "[sm_120,compute_120]"),
    ),
    "compressed.so": (
        "so",
        g("compute_80", "sm_80") + g("compute_90", "[sm_90,compute_90]") + ["-Xfatbin", "-compress-all"],
    ),
    "sm120a.cubin": ("cubin", ["-arch=sm_120a"]),
    "no_kernels.so": ("so", g("compute_80", "sm_80") + g("compute_90", "sm_90")),
    "ptx_af.fatbin": (
        "fatbin",
        g("compute_90a", "compute_90a") + g("compute_100f", "compute_100f") + g("compute_103a", "sm_103a"),
    ),
}


# torch_ops.so: a library of two torch ops, as an engine's `_C` library holds them. The schemas are
# the strings a TORCH_LIBRARY block registers; the fused op's kernel is built only for sm_100f (and
# its images zstd-compressed), the plain op's for sm_80 and sm_100f (uncompressed).
TORCH_OPS_SOURCES = {
    "fused.cu": (
        r"""
__global__ void fused_widget_mix_kernel(float* out, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * x[i];
}
extern "C" void launch_fused(float* out, const float* x, int n) {
  fused_widget_mix_kernel<<<(n + 255) / 256, 256>>>(out, x, n);
}
""",
        g("compute_100f", "sm_100f") + ["-Xfatbin", "-compress-all"],
    ),
    "plain.cu": (
        r"""
namespace widgets {
__global__ void plain_widget_scale_kernel(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
}
extern "C" void launch_plain(float* x, float a, int n) {
  widgets::plain_widget_scale_kernel<<<(n + 255) / 256, 256>>>(x, a, n);
}
extern "C" const char* const widget_schemas[] = {
  "fused_widget_mix(Tensor! out, Tensor x) -> ()",
  "plain_widget_scale(Tensor(a!) x, float a) -> Tensor(a!)",
};
""",
        g("compute_80", "sm_80") + g("compute_100f", "sm_100f"),
    ),
}


def build_torch_ops(nvcc: str, out: Path, workdir: Path) -> Path:
    objects = []
    for name, (source, flags) in TORCH_OPS_SOURCES.items():
        src = workdir / name
        src.write_text(source)
        obj = workdir / f"{name}.o"
        cmd = [nvcc, "-c", "-Xcompiler", "-fPIC", *flags, "-o", str(obj), str(src)]
        subprocess.run(cmd, check=True, cwd=workdir, capture_output=True, text=True)
        objects.append(str(obj))
    target = out / "torch_ops.so"
    cmd = [nvcc, "-shared", "-cudart", "shared", "-o", str(target), *objects]
    subprocess.run(cmd, check=True, cwd=workdir, capture_output=True, text=True)
    return target


def find_nvcc(explicit: str | None) -> str | None:
    for candidate in (explicit, shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def build(nvcc: str, name: str, out: Path, workdir: Path) -> Path:
    kind, flags = FIXTURES[name]
    src = workdir / "kernel.cu"
    src.write_text(NO_KERNELS if name == "no_kernels.so" else KERNEL)
    target = out / name
    if kind == "so":
        cmd = [
            nvcc,
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-cudart",
            "shared",
            *flags,
            "-o",
            str(target),
            str(src),
        ]
    else:
        cmd = [nvcc, f"-{kind}", *flags, "-o", str(target), str(src)]
    subprocess.run(cmd, check=True, cwd=workdir, capture_output=True, text=True)
    return target


def build_host_only(out: Path, workdir: Path) -> Path | None:
    """A shared library with no CUDA code at all (needs a C compiler; skipped without one)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src = workdir / "plain.c"
    src.write_text(HOST_ONLY)
    target = out / "host_only.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(target), str(src)], check=True, capture_output=True)
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--nvcc")
    ap.add_argument("--only", nargs="*", default=None, help="fixture names to build (default: all)")
    args = ap.parse_args(argv)
    nvcc = find_nvcc(args.nvcc)
    if nvcc is None:
        print("nvcc not found (PATH, /usr/local/cuda/bin); cannot build CUDA fixtures", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or [*FIXTURES, "torch_ops.so"]:
            try:
                if name == "torch_ops.so":
                    path = build_torch_ops(nvcc, args.out, Path(tmp))
                else:
                    path = build(nvcc, name, args.out, Path(tmp))
            except subprocess.CalledProcessError as exc:
                print(f"FAILED {name}: {exc.stderr.strip()[-400:]}", file=sys.stderr)
                return 1
            print(f"{path.name}\t{path.stat().st_size} bytes")
        if args.only is None and (plain := build_host_only(args.out, Path(tmp))) is not None:
            print(f"{plain.name}\t{plain.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
