"""What guarded code evidently needs, read from the names and strings in it.

Each feature is an `ArchFacts` field; a need is met when the arch has *any* of its features
(DeepGEMM runs on wgmma or tcgen05 hardware, and 12.0 has neither).
"""

from __future__ import annotations

import ast
import re

from capgap.arch import ArchFacts
from capgap.scan.statements import walk

# (features any of which the code needs, pattern over identifiers and strings, lowercased)
NEEDS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (("wgmma",), re.compile(r"wgmma|warpgroup|sm_?90a|flash_?attn_?3|\bfa3\b|_fa3_|_sm90\b|_sm90_")),
    (
        ("tcgen05",),
        re.compile(
            r"tcgen05|\btmem\b|_tmem|\bumma\b|sm_?100a|_sm100\b|_sm100_|sm10x|trtllm_?gen|cutlass_mla"
        ),
    ),
    (("wgmma", "tcgen05"), re.compile(r"deep_?gemm|flash_?mla")),
    (("tma",), re.compile(r"\btma\b|_tma\b|\btma_|_tma_")),
    (("fp4_tensor_cores",), re.compile(r"nvfp4|mxfp4|\bfp4\b|_fp4|fp4_|e2m1")),
    (("fp8_tensor_cores",), re.compile(r"\bfp8\b|_fp8|fp8_|e4m3|e5m2")),
    (("nvls_multicast",), re.compile(r"multicast|multimem|\bnvls\b|_nvls|nvls_")),
    (("nvswitch",), re.compile(r"mnnvl|nvswitch")),
)


def tokens(nodes: list[ast.AST]) -> str:
    """Identifiers, attribute names and short strings in `nodes`, lowercased, one per line."""
    out: list[str] = []
    for top in nodes:
        for node in walk(top):
            if isinstance(node, ast.Name):
                out.append(node.id)
            elif isinstance(node, ast.Attribute):
                out.append(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 200:
                out.append(node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(node.name)
    return "\n".join(out).lower()


# Substrings one of which each pattern above needs: plain searches rule most patterns out cheaply.
_LITERALS: tuple[tuple[str, ...], ...] = (
    ("wgmma", "warpgroup", "90a", "flash", "fa3", "_sm90"),
    ("tcgen05", "tmem", "umma", "100a", "_sm100", "sm10x", "trtllm", "cutlass_mla"),
    ("deep", "mla"),
    ("tma",),
    ("fp4", "e2m1"),
    ("fp8", "e4m3", "e5m2"),
    ("multicast", "multimem", "nvls"),
    ("mnnvl", "nvswitch"),
)
_MAX_CHARS = 8000  # the guarded code's start says what it needs; a long tail only costs time


def needs_in(text: str) -> list[tuple[str, ...]]:
    """The feature needs evident in `text` (names and strings, lowercased)."""
    text = text[:_MAX_CHARS]
    return [
        feats
        for (feats, pattern), literals in zip(NEEDS, _LITERALS, strict=True)
        if any(lit in text for lit in literals) and pattern.search(text)
    ]


def lacking(needs: list[tuple[str, ...]], arch: ArchFacts) -> list[tuple[str, ...]]:
    return [feats for feats in needs if not any(arch.has(f) for f in feats)]


def describe(feats: tuple[str, ...]) -> str:
    return " or ".join(f.replace("_tensor_cores", " tensor cores").replace("nvls_", "NVLS ") for f in feats)
