"""The tree's compiled extension modules (`vllm/_deepselect_C.abi3.so`): what a path that imports one
needs, read from the kernel images it was built with.

A library built only as `sm_100f` (DeepSelect) or `sm_90a` + `sm_100f` (FlashMLA) images has no
kernel a GPU without tcgen05 or wgmma can load (capgap.binaries.specific): a path that imports it
(`import vllm._deepselect_C` after the gate) runs kernels the target lacks, whatever the Python
around them says. Images are read only for the modules a judged path reaches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from capgap.binaries.specific import ArchSpecific

# `_C.abi3.so`, `_C.cpython-311-x86_64-linux-gnu.so`, `_C.so`: the module's name is the first part
_TAGS = ("abi3", "cpython-", "pypy")


def module_of(rel: str) -> str:
    """The dotted module an extension file imports as ("" when the name is no extension's):
    `vllm/_deepselect_C.abi3.so` -> `vllm._deepselect_C`."""
    folder, _, name = rel.rpartition("/")
    parts = name.split(".")
    if parts[-1] != "so" or not parts[0].isidentifier():
        return ""
    if len(parts) == 3 and not parts[1].startswith(_TAGS) or len(parts) > 3:
        return ""  # `libfoo.so.1`, `x.other.so`: a shared library, not a module Python imports
    return ".".join([*folder.split("/"), parts[0]] if folder else [parts[0]])


class Extensions:
    """The extension modules of a tree by dotted name, and what each is bound to (read once)."""

    def __init__(
        self,
        files: Iterable[tuple[str, str]] = (),
        read: Callable[[str], ArchSpecific | None] = lambda path: None,
    ) -> None:
        """`files`: (relative path, path) of the tree's `.so` files; `read`: what the file at a
        path is bound to (binaries.specific.bound_library: the reading is the scan's)."""
        self.paths = {m: path for rel, path in files if (m := module_of(rel))}
        self._readfile = read
        self._read: dict[str, tuple[tuple[str, ...], str] | None] = {}

    def needs(self, dotted: str) -> tuple[tuple[str, ...], str] | None:
        """What `dotted` (an extension module, or a name in one) needs and where that was read
        (`(("tcgen05",), "vllm._deepselect_C's compiled kernels, built only for sm_100f")`), or
        None."""
        module = dotted if dotted in self.paths else dotted.rpartition(".")[0]
        if module not in self.paths:
            return None
        if module not in self._read:
            bound = self._readfile(self.paths[module])
            said = f"{module}'s compiled kernels, built only for {', '.join(bound.images)}" if bound else ""
            self._read[module] = (bound.features, said) if bound else None
        return self._read[module]
