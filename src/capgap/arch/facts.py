"""Load facts.toml: what each compute capability has, with the source of every fact."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

FEATURES = ("wgmma", "tcgen05", "tma", "clusters", "fp8_tensor_cores", "fp4_tensor_cores")


# What code may need beyond the features above, derived: instructions whose PTX target decides where a
# kernel builds (PTX ISA 9.0 target requirements; each checked with nvcc 13.0, `-gencode
# arch=compute_X,code=sm_X`, 2026-12-02), and a system of more than one GPU.
DERIVED: dict[str, Callable[[ArchFacts], bool]] = {
    # griddepcontrol (programmatic dependent launch), elect.sync, setmaxnreg, mbarrier.try_wait:
    # refused for sm_89
    "ptx_sm90": lambda a: a.number >= 90,
    # packed FP32 fma/mul/add .f32x2: refused for sm_90a, built for sm_100a through sm_121a
    "ptx_sm100": lambda a: a.number >= 100,
    # redux.sync.{min,max}.f32: built for sm_100a, sm_100f and sm_103a only (refused for sm_90a,
    # sm_110a/f, sm_120/120a/120f and sm_121a)
    "redux_f32": lambda a: a.major == 10,
    # cvt.rs (stochastic rounding, `cvt.rs.satfinite.bf16x2.f32`): built for sm_100a and sm_103a
    # only (refused for sm_90a, sm_100f, sm_110a/f, sm_120a/f and sm_121a; nvcc 13.0, 2026-12-04)
    "cvt_rs": lambda a: a.major == 10,
    # more than one GPU in a system: not where every product is a one-GPU device, as the datasheets
    # cited for their NVLink say (Jetson modules: one integrated GPU; DGX Spark: one GB10)
    "multi_gpu": lambda a: a.sources.get("nvlink") not in _ONE_GPU_SOURCES,
    # code built for the SM100 family (sm_100a/100f/103a cubins: TRT-LLM-gen, DeepGEMM): tcgen05
    # runs on 11.0 only from a build for sm_110a/f (nvcc 13.0 --list-gpu-code)
    "sm100_build": lambda a: a.major == 10,
    # MX (microscaling) formats' block-scaled MMA: MXFP8 with e8m0 scales per 32 values, as FP4 came
    # with Blackwell (tcgen05.mma kind::mxf8f6f4 on 10.x/11.0, mma.sync ... block_scale on 12.x:
    # `mma.sync.aligned.kind::mxf8f6f4.block_scale` built for sm_120a, refused for sm_90a and
    # sm_89 "mma with block scale not supported", nvcc 13.0, 2026-12-05)
    "block_scaled_mma": lambda a: a.fp4_tensor_cores,
    # torch's registered FA4 attention (`activate_flash_attention_impl("FA4")`): torch 2.13's
    # torch/nn/attention/_fa4.py refuses any major but 9 and 10 ("FA4 requires compute capability
    # 9.0 or 10.0")
    "torch_fa4": lambda a: a.major in (9, 10),
}
_ONE_GPU_SOURCES = {"datasheet-jetson", "datasheet-dgx-spark"}


@dataclass(frozen=True)
class ArchFacts:
    cc: str
    major: int
    minor: int
    name: str
    family: str
    products: tuple[str, ...]
    wgmma: bool
    tcgen05: bool
    tma: bool
    clusters: bool
    fp8_tensor_cores: bool
    fp4_tensor_cores: bool
    smem_per_sm_kb: int
    smem_per_block_kb: int
    nvlink: str
    nvswitch: bool
    nvls_multicast: bool
    sources: dict[str, str] = field(compare=False, hash=False)

    @property
    def number(self) -> int:
        """major*10+minor, the spelling of `sm_XY` without the prefix (120 for 12.0)."""
        return self.major * 10 + self.minor

    def has(self, feature: str) -> bool:
        derived = DERIVED.get(feature)
        if derived is not None:
            return derived(self)
        value = getattr(self, feature)
        if isinstance(value, str):  # nvlink: "none" | "some" | "typical"
            return value != "none"
        return bool(value)

    def to_json(self) -> dict[str, Any]:
        src = source_texts()
        return {
            "compute_capability": self.cc,
            "sm": f"sm_{self.number}",
            "name": self.name,
            "family": self.family,
            "products": list(self.products),
            "features": {f: self.has(f) for f in FEATURES},
            "smem_per_sm_kb": self.smem_per_sm_kb,
            "smem_per_block_kb": self.smem_per_block_kb,
            "nvlink": self.nvlink,
            "nvswitch": self.nvswitch,
            "nvls_multicast": self.nvls_multicast,
            "sources": {k: src.get(v, v) for k, v in self.sources.items()},
        }


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    here = Path(__file__).with_name("facts.toml")
    if not here.is_file():  # pragma: no cover - a zipped install: no file, and nowhere to cache
        from importlib import resources

        return _parse(resources.files("capgap.arch").joinpath("facts.toml").read_bytes())
    return parsed_facts(here.read_bytes(), here.parent / "__pycache__")


def parsed_facts(data: bytes, cache_dir: Path) -> dict[str, Any]:
    """facts.toml parsed, through a cache beside the byte code (like a .pyc): parsing TOML costs
    ~10 ms on every run, loading the cache ~0.1 ms. The cache holds the digest of the text it was
    parsed from, so an edited facts.toml is parsed again; it is written only where Python would
    write byte code (a read-only install, or PYTHONDONTWRITEBYTECODE, just parses every time)."""
    digest = hashlib.sha256(data).hexdigest()
    cache = cache_dir / f"facts.toml.{sys.implementation.cache_tag}.marshal"
    try:
        cached_digest, raw = marshal.loads(cache.read_bytes())
        if cached_digest == digest:
            return raw  # type: ignore[no-any-return]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    raw = _parse(data)
    if not sys.dont_write_bytecode:
        try:
            cache_dir.mkdir(exist_ok=True)
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            tmp.write_bytes(marshal.dumps((digest, raw)))
            os.replace(tmp, cache)
        except (OSError, ValueError):  # read-only install, or a value marshal cannot hold
            pass
    return raw


def _parse(data: bytes) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib.loads(data.decode("utf-8"))


def cc_key(cc: str) -> tuple[int, int]:
    """The order of a compute capability: "12.0" -> (12, 0), "9" -> (9, 0)."""
    major, _, minor = cc.partition(".")
    return int(major), int(minor or 0)


@lru_cache(maxsize=1)
def all_facts() -> dict[str, ArchFacts]:
    """Every known compute capability, keyed "X.Y", in ascending order."""
    out: dict[str, ArchFacts] = {}
    for cc, row in _raw()["arch"].items():
        major, minor = (int(p) for p in cc.split("."))
        out[cc] = ArchFacts(
            cc=cc,
            major=major,
            minor=minor,
            name=row["name"],
            family=row["family"],
            products=tuple(row["products"]),
            wgmma=row["wgmma"],
            tcgen05=row["tcgen05"],
            tma=row["tma"],
            clusters=row["clusters"],
            fp8_tensor_cores=row["fp8_tensor_cores"],
            fp4_tensor_cores=row["fp4_tensor_cores"],
            smem_per_sm_kb=row["smem_per_sm_kb"],
            smem_per_block_kb=row["smem_per_block_kb"],
            nvlink=row["nvlink"],
            nvswitch=row["nvswitch"],
            nvls_multicast=row["nvls_multicast"],
            sources=dict(row["sources"]),
        )
    return dict(sorted(out.items(), key=lambda kv: (kv[1].major, kv[1].minor)))


def source_texts() -> dict[str, str]:
    return dict(_raw()["sources"])


def facts_for(cc: str) -> ArchFacts:
    """Facts for an "X.Y" key; KeyError when unknown (use `parse_arch` for user input)."""
    return all_facts()[cc]


def known_ccs() -> list[str]:
    return list(all_facts())
