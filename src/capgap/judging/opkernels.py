"""What a torch op a path calls needs, read from the kernels its library was built with.

`return ops.kimi_k3_attn_res(...)` under `is_device_capability_family(100)`: the op lives in the
tree's `_C_stable_libtorch.abi3.so`, whose 500 images are mostly portable, so the library as a
whole says nothing (judging.extensions). Its kernel for this op, `attn_res_fwd_online_v2_kernel`,
sits only in the `sm_100f` images: the path runs code a GPU without tcgen05 has no image of, and
the gate only says so.

The op's kernels are found by name: those whose own name shares a run of at least two words with
the op's, the longest such run covering at least half of the op's words (`fused_mqa_topk_prefill`:
`fused_mqa_topk_fp8_prefill_kernel`). Evidence only when every kernel sharing two words with it
sits in arch-specific images of GPUs with the feature (binaries.specific), and every image of the
library was read: one portable kernel of a like name and the op may run there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from capgap.binaries.kernels import KernelIndex
from capgap.binaries.specific import bound_images

# the op names code hands torch: `torch.ops._C.name(`, `hasattr(torch.ops._C, "name")`, and a call
# through a module of wrappers (`ops.name(`, vLLM's `_custom_ops`), kept only where a library of the
# tree registers the name
_NAMED = re.compile(
    r"torch\.ops\.\w+\.(\w+)|hasattr\(\s*torch\.ops\.\w+\s*,\s*[\"'](\w+)[\"']\s*\)|\b([A-Za-z_]\w*)\.(\w+)\s*\("
)
_MAX_OPS = 8
_MIN_RUN = 2


def op_names(code: str, modules: Iterable[str]) -> tuple[str, ...]:
    """The names in `code` that may be torch ops: read from `torch.ops`, or called on one of
    `modules` (the names an import binds)."""
    bound = set(modules)
    found: list[str] = []
    for m in _NAMED.finditer(code):
        name = m.group(1) or m.group(2) or (m.group(4) if m.group(3) in bound else None)
        if name and "_" in name.strip("_") and name not in found:
            found.append(name)
    return tuple(found[:_MAX_OPS])


def _words(name: str) -> list[str]:
    return [w for w in name.lower().split("_") if w]


def _run(a: list[str], b: list[str]) -> int:
    """The longest run of words `a` and `b` share."""
    best = 0
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                k += 1
            best = max(best, k)
    return best


class OpKernels:
    """The tree's compiled libraries, asked what the kernels of an op need (each read once)."""

    def __init__(
        self,
        libraries: Iterable[tuple[str, str]] = (),
        ops_of: Callable[[str], frozenset[str]] = lambda path: frozenset(),
        index_of: Callable[[str], KernelIndex | None] = lambda path: None,
    ) -> None:
        """`libraries`: (relative path, path) of the tree's `.so` files; `ops_of`: the ops a library
        registers; `index_of`: which images hold each of its kernels (binaries.kernels)."""
        self._libraries = list(libraries)
        self._ops_of = ops_of
        self._index_of = index_of
        self._ops: dict[str, frozenset[str]] | None = None
        self._index: dict[str, KernelIndex | None] = {}
        self._said: dict[str, tuple[tuple[str, ...], str] | None] = {}

    def needs(self, names: Iterable[str]) -> tuple[tuple[str, ...], str] | None:
        """What the first of `names` a library registers and whose kernels are bound needs, and
        where that was read (`(("tcgen05",), "the kernels of torch op x in lib.so (x_kernel), built
        only for sm_100f")`), or None."""
        for name in names:
            if name not in self._said:
                self._said[name] = self._judge(name)
            if self._said[name] is not None:
                return self._said[name]
        return None

    def _judge(self, op: str) -> tuple[tuple[str, ...], str] | None:
        if self._ops is None:
            self._ops = {rel: self._ops_of(path) for rel, path in self._libraries}
        for rel, path in self._libraries:
            if op not in self._ops[rel]:
                continue
            if path not in self._index:
                self._index[path] = self._index_of(path)
            index = self._index[path]
            if index is None or not index.complete:
                return None
            return _bound(op, rel, index)
        return None


def _bound(op: str, rel: str, index: KernelIndex) -> tuple[tuple[str, ...], str] | None:
    words = _words(op)
    runs = {kernel: _run(words, _words(kernel)) for kernel in index.kernels}
    best = max(runs.values(), default=0)
    if best < max(_MIN_RUN, (len(words) + 1) // 2):
        return None  # no kernel named for the op: nothing known of what it runs
    alike = sorted(k for k, n in runs.items() if n >= _MIN_RUN)
    images = sorted({image for k in alike for image in index.kernels[k]})
    bound = bound_images(images)
    if bound is None:
        return None
    kernels = ", ".join(alike[:3]) + (f" and {len(alike) - 3} more" if len(alike) > 3 else "")
    return bound.features, (
        f"the kernels of torch op {op} in {rel} ({kernels}), built only for {', '.join(bound.images)}"
    )
