"""Kernel libraries a module's functions call into: `deep_gemm.bf16_mega_gate(...)`, `hpc.ihc(...)`.

A wrapper module often tests no capability and imports no instruction set: its function hands the
work to a library (`import deep_gemm` inside it). The library's name says what its kernels need
(evidence.NEEDS: DeepGEMM and FlashMLA are wgmma / tcgen05 kernels, so is Tencent's HPC-Ops). A
path that uses the function runs them (judging.callees reads `FileFacts.entries`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from capgap.judging import callees, evidence
from capgap.reading.hintlines import holds_any

# The libraries worth the read: a plain `in` on the lowercased file rules out nearly every module.
_WORDS = ("deep_gemm", "flash_mla", "hpc")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\.(\w+)\s*\(")
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)")


def entries(
    text: str, low: str | bytes, lines: list[str] | None, module: str, is_package: bool
) -> dict[str, str]:
    """Each top-level function that calls a library whose name spells a need -> that call and its
    line (`"'deep_gemm.bf16_mega_gate' (line 35)"`; `lines`: the file's own, split from `text`
    when not given)."""
    if not holds_any(low, _WORDS):
        return {}
    own = module.partition(".")[0]
    libraries = {
        local: dotted
        for local, dotted in callees.import_map(text, module, is_package).items()
        if dotted.partition(".")[0] != own and _names_need(dotted)
    }
    if not libraries or not any(f"{local}." in text for local in libraries):  # no call through one
        return {}
    out: dict[str, str] = {}
    lines = lines if lines is not None else text.splitlines()
    for i, line in enumerate(lines):
        head = _TOP_DEF.match(line)
        if head is None or head[1] in out:
            continue
        body = callees.def_text(lines, i)
        for hit in _CALL.finditer(body):
            if hit[1] in libraries:
                at = i + 1 + body.count("\n", 0, hit.start())
                out[head[1]] = f"'{libraries[hit[1]]}.{hit[2]}' (line {at})"
                break
    return out


@lru_cache(maxsize=4096)
def _names_need(dotted: str) -> bool:
    """Does an imported name spell a need (`deep_gemm`)? The same few hundred names recur in every
    module of an engine."""
    return bool(evidence.needs_in(dotted.lower()))


# A module path spelled as a string (`"flashinfer.cute_dsl.blockscaled_gemm"`): two to six words
# (and the name taken from it, when the next string names one: `("flashinfer.gemm", "mm_fp4")`)
_MODULE_STRING = re.compile(
    r"""["']([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){1,5})["'](?:[ \t]*,[ \t]*["']([A-Za-z_]\w*)["'])?"""
)
_LOADED = re.compile(r"""\w\([ \t]*["']([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)["'][ \t]*\)""")
_HASATTR = re.compile(r"""\bhasattr\([ \t]*\w+[ \t]*,[ \t]*["']([A-Za-z_]\w*)["'][ \t]*\)""")
_TOP_NAME = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*[A-Za-z_][\w.]*\(")
_LOADERS = ("importlib", "__import__")  # a module that names modules by string loads them so
_MAX_NAMED = 4
_MAX_STATEMENT_LINES = 6


def named_modules(text: str, low: str | bytes, lines: list[str] | None) -> dict[str, tuple[str, ...]]:
    """Each top-level function, and each module variable a call makes, whose code names modules
    by string -> those modules (`has_x` -> ("flashinfer.cute_dsl.blockscaled_gemm",)), in a
    module that loads modules by name at all (importlib)."""
    if not holds_any(low, _LOADERS) or not _MODULE_STRING.search(text):
        return {}
    lines = lines if lines is not None else text.splitlines()
    out: dict[str, tuple[str, ...]] = {}
    for i, line in enumerate(lines):
        head = _TOP_DEF.match(line)
        if head is not None:
            body = callees.def_text(lines, i)
        elif (head := _TOP_NAME.match(line)) is not None:
            body = "\n".join(lines[i : i + _MAX_STATEMENT_LINES])
            body = body[: _statement_end(body)]
        else:
            continue
        spelled = [f"{hit[1]}.{hit[2]}" if hit[2] else hit[1] for hit in _MODULE_STRING.finditer(body)]
        # `mod = _get_submodule("flashinfer")` then `hasattr(mod, "cute_dsl_fused_moe_nvfp4")`: the
        # module loaded by name, and the names asked of it
        loaded = _LOADED.findall(body)
        if len(loaded) == 1:
            spelled += [f"{loaded[0]}.{attr}" for attr in _HASATTR.findall(body)]
        named = tuple(dict.fromkeys(spelled))[:_MAX_NAMED]
        if named and head[1] not in out:
            out[head[1]] = named
    return out


def _statement_end(text: str) -> int:
    """Where the call that starts `text` closes (its parentheses balance), or its end."""
    depth = 0
    for at, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at + 1
    return len(text)
