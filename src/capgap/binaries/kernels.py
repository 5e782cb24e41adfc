"""Which kernels each image of a library holds, and which torch ops its host code registers.

A library such as vLLM's `_C_stable_libtorch.abi3.so` carries hundreds of images: most kernels are
built for every arch, a few (a model's fused op) only as `sm_100f`. Which images hold a kernel is
read from the images themselves: a cubin names each kernel in its section names (`.text.<symbol>`),
PTX in its `.entry` lines. Compressed images are inflated (zstd: `compression.zstd` from Python
3.14, else the `zstandard` package; lz4 where the `lz4` package is installed); one that cannot be
leaves the index incomplete, and an incomplete index proves no kernel absent.

Ops are read from the schema strings a library registers (`"kimi_k3_attn_res(Tensor! prefix, ...) ->
()"`, in `.rodata`). Reading the images costs about 2 s for a 90 MB library (900 MB of cubins once
inflated), so the index is kept on disk by the file's identity, and built only when asked.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from capgap.binaries.cache import identity_file, write_atomically
from capgap.binaries.elf import BinaryReadError, section_names, section_ranges
from capgap.binaries.fatbin import FatbinEntry
from capgap.binaries.reader import UnreadableBinary, read_binary
from capgap.boundedread import open_regular

SCHEMA = 1
# `\0kimi_k3_attn_res(Tensor! prefix` or `\0_C::rms_norm(` or `\0cutlass_group_gemm_supported(int`
_SCHEMA = re.compile(
    rb"\x00(?:\w+::)?([A-Za-z_]\w*)(?:\.\w+)?\((?:Tensor|int|float|bool|str|SymInt|Scalar|ScalarType"
    rb"|Device|Layout|Generator|MemoryFormat|\))"
)
_TEXT = re.compile(rb"\.text\.([^\x00]+)")  # a cubin's section names: `.text.<kernel symbol>`
_ENTRY = re.compile(rb"\.entry\s+([A-Za-z_$][\w$]*)")  # PTX
_DIGITS = re.compile(r"\d+")
_THREADS = min(4, os.cpu_count() or 1)
_MAX_IMAGE = 1 << 29  # 512 MiB inflated: the largest cubin of an engine library is tens of MB


@dataclass(frozen=True)
class KernelIndex:
    """The images (cuobjdump's names: `sm_100f`, `compute_90`) that hold each kernel, by the kernel's
    own name (`attn_res_fwd_online_v2_kernel`, not its namespaces or template arguments)."""

    kernels: dict[str, tuple[str, ...]]
    complete: bool  # every image was read: a kernel missing from one is absent there


def kernel_name(symbol: str) -> str:
    """The innermost name of a kernel's symbol: `_ZN5sm10011fwd_prod_v229attn_res_fwd_online_v2_
    kernelILi7168E...` -> `attn_res_fwd_online_v2_kernel`; an `extern "C"` name as it is; "" when
    the name starts with a substitution (nothing of its own to read)."""
    if not symbol.startswith("_Z"):
        return symbol
    at = 2
    nested = symbol.startswith("N", at)
    at += nested
    last = ""
    while at < len(symbol):
        if symbol[at] in "LKVr":  # internal linkage, cv-qualifiers: no name
            at += 1
            continue
        m = _DIGITS.match(symbol, at)
        if m is None:
            break
        size = int(m.group())
        last, at = symbol[m.end() : m.end() + size], m.end() + size
        if not nested:
            break
    return last


def registered_ops(path: str) -> frozenset[str]:
    """The torch ops whose schemas the library's read-only data holds (empty for a file that is no
    ELF library or cannot be read)."""
    try:
        fd, st = open_regular(Path(path))
        with os.fdopen(fd, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            if st.st_size < 64 or mm[:4] != b"\x7fELF":
                return frozenset()
            found: set[str] = set()
            for name, offset, size in section_ranges(fh, st.st_size, mm):
                if name.startswith((".rodata", ".lrodata")):  # `.rodata.str1.1` in an unlinked object
                    found.update(m.decode() for m in _SCHEMA.findall(mm, offset, offset + size))
            return frozenset(found)
    except (OSError, BinaryReadError, ValueError):
        return frozenset()


def kernel_index(path: str, cache_root: Path | None = None) -> KernelIndex | None:
    """What kernels each image of the library at `path` holds (None: no binary, or unreadable),
    from the cache under `cache_root` when the file has not changed since it was read."""
    target = Path(path)
    try:
        st = target.stat()
    except OSError:
        return None
    where = identity_file(cache_root / f"kernels-v{SCHEMA}", target, st) if cache_root else None
    if where is not None:
        try:
            data = json.loads(where.read_text())
            return KernelIndex({k: tuple(v) for k, v in data["kernels"].items()}, bool(data["complete"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
    index = _read_index(target)
    if index is not None and where is not None:
        write_atomically(where, {"kernels": index.kernels, "complete": index.complete})
    return index


def _read_index(path: Path) -> KernelIndex | None:
    try:
        binary = read_binary(path)
    except UnreadableBinary:
        return None
    if binary is None:
        return None
    kernels: dict[str, set[str]] = {}
    names: dict[bytes, str] = {}  # a symbol recurs in every image of its module: named once
    complete = True
    try:
        fd, _ = open_regular(path)
        with os.fdopen(fd, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            entries = binary.loadable
            # zstd lets go of the GIL while it inflates: images are read side by side
            with ThreadPoolExecutor(max_workers=_THREADS) as pool:
                symbols = pool.map(lambda entry: _symbols(mm, entry), entries)
                for entry, found in zip(entries, symbols, strict=True):
                    if found is None:
                        complete = False
                        continue
                    for symbol in found:
                        name = names.get(symbol)
                        if name is None:
                            name = names[symbol] = kernel_name(symbol.decode("latin-1"))
                        if name:
                            kernels.setdefault(name, set()).add(entry.name)
    except OSError:
        return None
    return KernelIndex({k: tuple(sorted(v)) for k, v in kernels.items()}, complete)


def _symbols(mm: mmap.mmap, entry: FatbinEntry) -> set[bytes] | None:
    """The kernel symbols of one image (None: it could not be inflated)."""
    image = _inflated(mm, entry)
    if image is None:
        return None
    return set(_ENTRY.findall(image) if entry.kind == "ptx" else _cubin_kernels(image))


def _cubin_kernels(cubin: bytes) -> list[bytes]:
    """The kernel symbols a cubin's section names give (`.text.<symbol>`), read from its section
    name table alone (empty for what is no readable ELF)."""
    try:
        return _TEXT.findall(section_names(cubin))
    except BinaryReadError:
        return []


def _inflated(mm: mmap.mmap, entry: FatbinEntry) -> bytes | None:
    """The image's bytes, inflated; None when its codec is one this machine cannot read, when it
    claims more than _MAX_IMAGE bytes inflated (a damaged or hostile header), or is damaged."""
    if entry.size > _MAX_IMAGE:
        return None
    try:
        (header_size,) = struct.unpack_from("<I", mm, entry.offset + 4)
        start = entry.offset + header_size
        if not entry.compression:
            return mm[start : start + entry.payload_size]
        (packed,) = struct.unpack_from("<I", mm, entry.offset + 0x10)
        inflate = _codec(entry.compression)
        if inflate is None:
            return None
        image = inflate(mm[start : start + min(packed, entry.payload_size)], entry.size)
    except Exception:  # noqa: BLE001 - a codec's own error type: a damaged image is only unread
        return None
    return image if len(image) <= _MAX_IMAGE else None


def _codec(name: str) -> Callable[[bytes, int], bytes] | None:
    if name == "zstd":
        try:
            from compression import zstd  # type: ignore[import-not-found]  # Python 3.14

            return lambda data, size: zstd.ZstdDecompressor().decompress(data, max_length=size)
        except ImportError:
            pass
        try:
            import zstandard
        except ImportError:
            return None
        return lambda data, size: zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    if name == "lz4":
        try:
            import lz4.block  # type: ignore[import-not-found]
        except ImportError:
            return None
        return lambda data, size: lz4.block.decompress(data, uncompressed_size=size)
    return None
