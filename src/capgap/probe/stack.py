"""The installed inference stack, read from package metadata (never by importing the engines).

`inventory(None)` reads the running environment; `inventory("/path/to/python")` asks that
interpreter (isolated, without site processing: interpreters.py) where its site directories are,
and reads their dist-info here, since users install capgap apart from their engine's venv.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from capgap.probe import _metadata_snippet

# Dists the probe reports by name (PEP 503 normalised), in display order.
COMPONENTS = (
    "torch",
    "triton",
    "pytorch-triton",
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "sgl-kernel",
    "sglang-kernel",
    "vllm",
    "deep-gemm",
    "tensorrt-llm",
)
# These three ship one release together; mixed versions load mismatched kernels.
LOCKSTEP = ("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache")
_NCCL = re.compile(r"^nvidia-nccl(-cu\d+)?$")
_TORCH_FILES = ["torch/version.py", "torch/include/caffe2/core/macros.h"]


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    location: str
    editable: bool = False
    url: str | None = None  # where a direct (VCS / local dir) install came from


@dataclass(frozen=True)
class TorchBuild:
    version: str
    cuda: str | None  # "13.0" from torch/version.py; None for a CPU build
    cuda_tag: str | None  # "cu130" from the local version label
    arch_list: list[str] | None  # from the build flags recorded in torch's headers, when present
    arch_list_note: str | None = None


@dataclass
class Stack:
    python: str
    python_version: str
    packages: dict[str, Package] = field(default_factory=dict)  # every installed dist, by normalised name
    torch: TorchBuild | None = None
    warnings: list[str] = field(default_factory=list)

    def components(self) -> dict[str, Package]:
        return {n: self.packages[n] for n in COMPONENTS if n in self.packages}

    def nccl(self) -> dict[str, Package]:
        return {n: p for n, p in self.packages.items() if _NCCL.match(n)}

    def nvidia_wheels(self) -> dict[str, Package]:
        """The nvidia-* CUDA wheels (nvidia-ml-py is the NVML binding, not CUDA)."""
        return {
            n: p for n, p in sorted(self.packages.items()) if n.startswith("nvidia-") and n != "nvidia-ml-py"
        }

    def to_json(self) -> dict[str, Any]:
        def versions(pkgs: dict[str, Package]) -> dict[str, Any]:
            return {n: {"version": p.version, "editable": p.editable, "url": p.url} for n, p in pkgs.items()}

        return {
            "python": self.python,
            "python_version": self.python_version,
            "torch": asdict(self.torch) if self.torch else None,
            "components": versions(self.components()),
            "nccl": versions(self.nccl()),
            "nvidia_wheels": {n: p.version for n, p in self.nvidia_wheels().items()},
            "warnings": list(self.warnings),
        }


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def inventory(python: str | None = None, *, paths: list[str] | None = None) -> Stack:
    """The stack of the running environment, of another interpreter, or of `paths` (site dirs)."""
    request = {"files": {"torch": _TORCH_FILES}}
    raw = _metadata_snippet.collect(request, paths) if python is None else _collect_from(python, request)
    return stack_from_raw(raw)


def _collect_from(python: str, request: dict[str, Any]) -> dict[str, Any]:
    """Another environment's packages, read from its site directories' files by this process:
    its interpreter is only asked (isolated, no site processing) where they are."""
    from capgap.interpreters import describe

    other = describe(python)
    raw = _metadata_snippet.collect(request, list(other.sitedirs))
    return {**raw, "python": other.executable, "python_version": other.version}


def stack_from_raw(raw: dict[str, Any]) -> Stack:
    stack = Stack(python=raw["python"], python_version=raw["python_version"])
    for d in raw["dists"]:
        url = d.get("direct_url") or {}
        stack.packages[normalize(d["name"])] = Package(
            name=d["name"],
            version=d["version"],
            location=d["location"],
            editable=bool((url.get("dir_info") or {}).get("editable")),
            url=url.get("url"),
        )
    torch = stack.packages.get("torch")
    if torch is not None:
        stack.torch = torch_build(
            torch.version, raw["files"].get(_TORCH_FILES[0]), raw["files"].get(_TORCH_FILES[1])
        )
    stack.warnings.extend(lockstep_warnings(stack.packages))
    return stack


def torch_build(version: str, version_py: str | None, macros_h: str | None) -> TorchBuild:
    tag = re.search(r"\+(cu\d+|rocm[\d.]+|cpu|xpu)", version)
    cuda = None
    if version_py:
        m = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", version_py, re.M)
        cuda = m.group(1) if m else None
    arch_list, note = _arch_list(macros_h)
    return TorchBuild(
        version=version,
        cuda=cuda,
        cuda_tag=tag.group(1) if tag else None,
        arch_list=arch_list,
        arch_list_note=note,
    )


def _arch_list(macros_h: str | None) -> tuple[list[str] | None, str | None]:
    """The -gencode targets torch's build recorded in caffe2/core/macros.h (torch.__config__.show())."""
    if macros_h is None:
        return None, "torch/include/caffe2/core/macros.h not found"
    m = re.search(r'\{"TORCH_CUDA_ARCH_LIST",\s*"([^"]*)"\}', macros_h)
    if m and m.group(1).strip():
        return m.group(1).replace(";", " ").split(), None
    codes = re.findall(r"arch=compute_(\d+[af]?),code=\[?([\w,]+)\]?", macros_h)
    if codes:
        found: list[str] = []
        for _virtual, targets in codes:
            for t in targets.split(","):
                if t not in found:
                    found.append(t)
        return found, None
    return (
        None,
        "this torch build records no arch list in its headers; `capgap binaries` reads its kernels",
    )


def lockstep_warnings(packages: dict[str, Package]) -> list[str]:
    present = {n: packages[n].version for n in LOCKSTEP if n in packages}
    public = {n: v.split("+", 1)[0] for n, v in present.items()}  # jit-cache carries a +cuXXX label
    if len(set(public.values())) <= 1:
        return []
    listed = ", ".join(f"{n} {v}" for n, v in present.items())
    return [f"flashinfer packages must share one version (lockstep), found: {listed}"]
