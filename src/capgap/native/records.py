"""What one native source contributes, before any arch is considered (picklable, cacheable).

What code needs (tcgen05, wgmma, ...) is read only for the few arms a finding names, when judged.
A file's conditional groups (`#if` ... `#elif` ... `#else` ... `#endif`), each arm with its
condition as text and what its body compiles to (real code, nothing, a trap, an error), the
function the group sits in, and the file's `#define`s with the arm each sits under.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# What an arm's body compiles to.
CODE, EMPTY, TRAP, ERROR = "code", "empty", "trap", "error"


@dataclass(frozen=True)
class Arm:
    line: int  # the directive's line
    cond: str  # the condition (`1` for #else); #ifdef X is `defined(X)`
    offset: int  # where the directive starts (macros defined later in the file are not yet defined)
    body_start: int  # where its body starts (after the directive's last line)
    body: str = CODE  # CODE | EMPTY | TRAP | ERROR (classified for arch-dependent groups only)
    last: int = 0  # the body's last line
    body_end: int = 0  # where its body ends (the next arm's directive or the #endif)
    source: str = ""  # the directive as written (first line)
    hint: bool = False  # its body spells something `native.direct` reads (tcgen05, SM100_, wgmma, ...)


@dataclass(frozen=True)
class Function:
    kind: str  # "kernel" (__global__) | "device"
    name: str
    line: int
    start: int  # where its body's `{` is


@dataclass
class Group:
    arms: list[Arm]
    parent: tuple[int, int] | None  # (group index, arm index) it sits in
    end: int = 0  # the #endif line
    end_offset: int = 0  # where the #endif starts
    archish: bool = False  # some condition names an arch macro (judged); else only for reach
    function: Function | None = None
    whole_body: bool = False  # the group is all there is of its function's body


@dataclass(frozen=True)
class Define:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    value: str
    offset: int
    parent: tuple[int, int] | None


@dataclass
class NativeFacts:
    path: str
    groups: list[Group] = field(default_factory=list)
    defines: list[Define] = field(default_factory=list)
    source: str = ""  # the file's path on disk: judging reads what a finding's code needs from it
    host: list[Any] = field(default_factory=list)  # host-side dispatch decisions (native.host)
    helpers: list[Any] = field(default_factory=list)  # host-side arch helpers (native.helpers)
