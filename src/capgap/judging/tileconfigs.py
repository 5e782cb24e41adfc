"""Fixed Triton launch configs written as literals in a module with its own `tl.dot` kernel.

`return dict(block_m=64, block_n=512, block_k=64, num_warps=8, num_stages=3)`: a function that
picks the tile sizes a GEMM-shaped kernel of the module is launched with. Unlike an autotune list
(`triton.Config`, whose configs that run out of resources the autotuner skips), such a config is
launched as written, so one whose shared memory exceeds an arch's per-block limit fails there with
`OutOfResources`. The need is estimated by `capgap.configs.smem` (A [M, K] and B [K, N] tiles in
pipeline buffers), with the element size of the module's dtype where its path names one (fp8,
int8, ...), else 2 bytes (bf16/fp16).

Read only where the module also defines a `@triton.jit` kernel that calls `tl.dot`, and only
configs that give all three of BLOCK M, N and K as integer literals. With them the module's call
graph (which of its functions each top-level function calls) is kept, so that a rule can tell
whether a gate's function and the config's function are used together.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from capgap.arch import ArchFacts
from capgap.configs import smem
from capgap.judging.statements import walk

# `block_m`, `BLOCK_M`, `BLOCK_SIZE_M`, `block_size_m` -> M
_TILE_KEY = re.compile(r"block_(?:size_)?([mnk])", re.I)
_K_LITERAL = re.compile(r"block_(?:size_)?k['\"]?\s*[=:]\s*\d", re.I)
_DTYPE_IN_PATH = re.compile(r"(fp8|int8|int4|float8)", re.I)


@dataclass(frozen=True)
class TileConfig:
    """One literal launch config: the function that writes it, its line and its tile sizes."""

    function: str
    line: int
    block_m: int
    block_n: int
    block_k: int
    num_stages: int | None

    def need(self, arch: ArchFacts, dtype: str | None) -> int:
        """Estimated shared memory (bytes) per block on `arch` (capgap.configs.smem)."""
        entry: dict[str, int] = {
            "BLOCK_SIZE_M": self.block_m,
            "BLOCK_SIZE_N": self.block_n,
            "BLOCK_SIZE_K": self.block_k,
        }
        if self.num_stages is not None:
            entry["num_stages"] = self.num_stages
        return smem.estimate_bytes(entry, dtype, arch) or 0

    @property
    def stages(self) -> int:
        """The stages it is launched with (Triton's default where it gives none)."""
        return self.num_stages or smem.TRITON_DEFAULT_NUM_STAGES

    def copies(self, arch: ArchFacts) -> int:
        """How many copies of its A and B tiles Triton keeps on `arch` (capgap.configs.smem)."""
        return smem.pipeline_buffers(self.stages, arch, self.block_m)

    def describe(self) -> str:
        return f"BLOCK M/N/K {self.block_m}/{self.block_n}/{self.block_k}, {self.stages} stages"


def dtype_of(path: str) -> str | None:
    """The dtype tag the module's path names (`blocked_fp8.py` -> `fp8_w8a8`), None: bf16/fp16."""
    hit = _DTYPE_IN_PATH.search(path)
    if hit is None:
        return None
    word = hit[1].lower()
    return "float8" if word in ("fp8", "float8") else "int8_w8a8" if word == "int8" else "int4_w4a16"


def read(text: str) -> tuple[list[TileConfig], dict[str, tuple[str, ...]]]:
    """The module's literal tile configs and, when it has any, its call graph (the whole file is
    parsed: the statement cut the scan reads leaves out functions that test no capability)."""
    if "tl.dot" not in text or "triton.jit" not in text or _K_LITERAL.search(text) is None:
        return [], {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], {}
    configs: list[TileConfig] = []
    calls: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        called: dict[str, None] = {}
        nodes = list(walk(node))  # ast.walk's nodes but contexts and operators, in its order
        tuned = {id(arg) for sub in nodes if _autotune(sub) for arg in sub.args}  # type: ignore[attr-defined]
        for sub in nodes:
            if id(sub) in tuned:
                continue
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                called[sub.func.id] = None
            found = _config(sub)
            if found is not None:
                configs.append(TileConfig(node.name, sub.lineno, *found))  # type: ignore[attr-defined]
        calls[node.name] = tuple(called)
    return (configs, calls) if configs else ([], {})


def _autotune(node: ast.AST) -> bool:
    """`triton.Config({...}, num_stages=3)`: one of an autotune list (configs that run out of
    resources are skipped by the autotuner)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name == "Config"


def _config(node: ast.AST) -> tuple[int, int, int, int | None] | None:
    """M, N, K and num_stages of `dict(block_m=..., ...)` or `{"block_m": ..., ...}` literals."""
    pairs: list[tuple[str, ast.expr]] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        pairs = [(k.arg, k.value) for k in node.keywords if k.arg is not None]
    elif isinstance(node, ast.Dict):
        pairs = [
            (k.value, v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    sizes: dict[str, int] = {}
    stages: int | None = None
    for key, value in pairs:
        if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0):
            continue
        tile = _TILE_KEY.fullmatch(key)
        if tile is not None:
            sizes[tile[1].lower()] = value.value
        elif key == "num_stages":
            stages = value.value
    if len(sizes) != 3:
        return None
    return sizes["m"], sizes["n"], sizes["k"], stages


def linked(calls: dict[str, tuple[str, ...]], gate: str, config: str) -> bool:
    """Is the config's function used together with the gate's: the gate's own function calls it,
    or one function calls it and calls the gate's function (itself or through one function)?"""
    if config in calls.get(gate, ()):
        return True
    for caller, callees in calls.items():
        if caller == gate or config not in callees:
            continue
        if gate in callees or any(gate in calls.get(c, ()) for c in callees):
            return True
    return False
