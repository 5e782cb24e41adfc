"""Direct evidence in native code that it needs tcgen05 or wgmma: what `gate-admits-unsupported`
rests on (a library's or a file's name is not enough).

Read from code with its comments cut, case kept, in order of what it costs the target:
- `compile`: PTX the target's ptxas refuses, in an `asm` string (`"tcgen05.alloc..."`,
  `"wgmma.fence..."`: "Instruction 'tcgen05.alloc' not supported on .target 'sm_120'"), or a
  `cuda::ptx::tcgen05_*` / `wgmma_*` wrapper (libcu++ leaves it an unresolved extern there:
  "ptxas fatal: Unresolved extern function '__cuda_ptx_tcgen05_alloc_is_not_supported_before_
  SM_100a_SM_101a__'"). Both checked with nvcc 13.0 for sm_120, sm_120a and sm_120f.
- `run`: CuTe / CUTLASS atoms and arch-named classes (`SM100_MMA_F16BF16_SS`, `SM90_64x128x16_
  F32BF16BF16_SS`, `UMMA::`, `GMMA::`, `MainloopSm100TmaUmmaWarpSpecialized`, `launch_umma`):
  they compile for the target without their instructions (CuTe's `CUTE_INVALID_CONTROL_PATH`, a
  `__brkpt()`; CUTLASS's "Arch conditional MMA instruction used without targeting appropriate
  compute capability"), so the kernel fails when it runs.
Messages in strings (`"Attempting to use wgmma..."`) are no evidence, and neither are a bare
`sm100` (a family path may serve 12.x too) or multicast (a device gate cannot see the topology).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMPILE, RUN = "compile", "run"


@dataclass(frozen=True)
class Direct:
    need: tuple[str, ...]  # the features (an ArchFacts field) any of which the code needs
    spelling: str  # what it was read from (`tcgen05.alloc`, `SM100_MMA_F16BF16_SS`)
    line: int
    fails: str  # COMPILE | RUN

    def seen(self, where: str = "") -> str:
        return f"'{self.spelling}' (line {self.line}{', ' + where if where else ''})"


_FEATURE = {"tcgen05": ("tcgen05",), "wgmma": ("wgmma",)}
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_PTX = re.compile(rb"\b(tcgen05|wgmma)\.[a-z_]+")
_ASM = re.compile(rb"\basm\b|__asm__")
_STATEMENT_END = re.compile(rb"[;{}]")
_INTRINSIC = re.compile(rb"\bptx::(tcgen05|wgmma)_\w+")
# (feature, pattern) for names in code (string literals blanked first); case kept.
_NAMES: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("tcgen05", re.compile(rb"\bSM10[03]_(?:MMA|TMEM|UTCCP|UMMA|MMA_2x1SM)\w*")),
    ("tcgen05", re.compile(rb"\bUMMA::\w+")),
    ("tcgen05", re.compile(rb"(?<![A-Za-z0-9])(?:tcgen05|TCGEN05|umma|UMMA|Umma(?=[A-Z_]))(?![a-z0-9])\w*")),
    ("tcgen05", re.compile(rb"\b\w*?(?:[a-z0-9]Sm10[03]|\bSm10[03](?=[A-Z]))\w*")),
    ("tcgen05", re.compile(rb"(?<![A-Za-z0-9])sm_?10[03]a(?![a-z0-9])\w*")),
    ("wgmma", re.compile(rb"\bSM90_\d+x\d+x\d+_\w+")),
    ("wgmma", re.compile(rb"\bGMMA::\w+")),
    ("wgmma", re.compile(rb"(?<![A-Za-z0-9])(?:wgmma|WGMMA|Wgmma(?=[A-Z_]))(?![a-z0-9])\w*")),
    # CuTe's wgmma.fence / commit_group / wait_group (not warpgroup_reg_alloc: setmaxnreg, which
    # sm_120a and sm_120f assemble; not warpgroup_fence_operand: no instruction)
    ("wgmma", re.compile(rb"\bwarpgroup_(?:arrive|commit_batch|wait)\b")),
    ("wgmma", re.compile(rb"\b\w*?(?:[a-z0-9]Sm90a?|\bSm90a?(?=[A-Z]))\w*")),
    ("wgmma", re.compile(rb"(?<![A-Za-z0-9])sm_?90a(?![a-z0-9])\w*")),
)
# What makes code worth reading for the above at all (at read time, per arm).
HINT = re.compile(
    rb"tcgen05|wgmma|UMMA|Umma|umma|GMMA|SM10[03]_|SM90_|Sm10[03]|Sm90|sm_?10[03]a|sm_?90a|warpgroup"
)


def read(code: bytes, first_line: int) -> list[Direct]:
    """The direct evidence in `code` (comments already cut; `first_line`: the file line it starts
    at), the first of each feature and kind, compile-failing first."""
    if not HINT.search(code):
        return []
    out: list[Direct] = []
    seen: set[tuple[str, str]] = set()

    def add(feature: str, spelling: bytes, at: int, fails: str) -> None:
        if (feature, fails) in seen:
            return
        seen.add((feature, fails))
        line = first_line + code.count(b"\n", 0, at)
        out.append(Direct(_FEATURE[feature], spelling.decode("utf-8", "replace")[:80], line, fails))

    blank = _STRING.sub(lambda s: b'"' + b" " * (len(s[0]) - 2) + b'"', code)
    for s in _STRING.finditer(code):
        for m in _PTX.finditer(code, s.start(), s.end()):
            if _in_asm(blank, s.start()):
                add(m[1].decode(), m[0], m.start(), COMPILE)
    m = _INTRINSIC.search(blank)
    if m:
        add(m[1].decode(), m[0], m.start(), COMPILE)
    for feature, pattern in _NAMES:
        m = pattern.search(blank)
        if m:
            start = m.start()
            while start > 0 and (blank[start - 1 : start].isalnum() or blank[start - 1] == 95):
                start -= 1  # the whole name (`run_umma_pipeline`, not `umma_pipeline`)
            add(feature, blank[start : m.end()], m.start(), RUN)
    out.sort(key=lambda d: (d.fails != COMPILE, d.line))
    return out


def _in_asm(blank: bytes, at: int) -> bool:
    """Is the string at `at` part of an `asm(...)` statement (the code since the last `;`, `{` or
    `}` outside a string holds the keyword)? `blank`: the code with its strings blanked."""
    start = max(0, at - 400)
    ends = [m.end() for m in _STATEMENT_END.finditer(blank, start, at)]
    return _ASM.search(blank, ends[-1] if ends else start, at) is not None
