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
