"""What each arm of an arch-dependent group compiles to, what it needs, and the function it is in.

An arm is EMPTY when nothing but comments, prints, bare returns and casts to void is left of it,
TRAP when what is left is a `__trap()` (or CUTLASS's / CuTe's invalid-path macros), ERROR when
it is an `#error` or a `static_assert` that always fails, else CODE. Needs (tcgen05, wgmma,
multimem, ...) are read (`needs`, when a finding is judged) from an arm's own text (directives and
comments cut), its function's and the file's, with the line they were read from; the spellings
are the Python side's (`judging.evidence`) for what a target may lack, as byte searches.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass

from capgap.native import direct
from capgap.native.records import CODE, EMPTY, ERROR, TRAP, Function, Group
from capgap.reading.hintlines import holds_any

_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#[^\n]*(?:\\\r?\n[^\n]*)*", re.M)
_TRAP = re.compile(
    rb"__trap\s*\(\s*\)\s*;|asm\s*(?:volatile\s*)?\(\s*\"trap;\"\s*\)\s*;|__builtin_trap\s*\(\s*\)\s*;"
    rb"|CUTE_INVALID_CONTROL_PATH\s*\([^;]*\)\s*;|CUTLASS_NOT_IMPLEMENTED\s*\(\s*\)\s*;|__brkpt\s*\(\s*\)\s*;"
)
_FAILING_ASSERT = re.compile(
    rb"static_assert\s*\(\s*(?:false|0|!\s*sizeof|\w*(?:dependent|always)_false\w*|sizeof\s*\([^)]*\)\s*==\s*0)"
    rb"[^;]*;"
)
# Statements that do nothing a caller could use: prints, a bare return, casts to void, asserts, no-ops.
_NOTHING = re.compile(
    rb"(?:printf|CUTE_RUNTIME_ASSERT|assert)\s*\((?:[^;\"]|\"(?:[^\"\\]|\\.)*\")*\)\s*;|return\s*;"
    rb"|\(\s*void\s*\)[^;]*;|CUTE_GCC_UNREACHABLE\s*;|__builtin_unreachable\s*\(\s*\)\s*;|;"
)
# What code must spell to need an instruction set, as byte searches in its lowercased text; a
# spelling marked True must start a word (`umma`, not `summary`). The spellings of
# judging.evidence for features a GPU may lack (FP8/FP4/TMA are on every arch this judges for).
NEEDS: tuple[tuple[tuple[str, ...], tuple[tuple[bytes, bool], ...]], ...] = (
    (("tcgen05",), ((b"tcgen05", False), (b"umma", True), (b"tmem", True), (b"_tmem", False),
                    (b"sm100a", False), (b"sm_100a", False), (b"_sm100", False), (b"sm103a", False),
                    (b"sm_103a", False), (b"_sm103", False), (b"sm10x", False),
                    (b"trtllm_gen", False), (b"trtllmgen", False), (b"cutlass_mla", False))),
    (("wgmma",), ((b"wgmma", False), (b"warpgroup", False), (b"setmaxnreg", False), (b"sm90a", False),
                  (b"sm_90a", False), (b"_sm90", False), (b"gmma", True), (b"flash_attn_3", False))),
    (("wgmma", "tcgen05"), ((b"deep_gemm", False), (b"deepgemm", False), (b"flash_mla", False),
                            (b"flashmla", False))),
    (("nvls_multicast",), ((b"multimem", False), (b"multicast", False), (b"nvls", True))),
    (("nvswitch",), ((b"mnnvl", False), (b"nvswitch", False))),
    # PTX whose target floor decides where it builds (capgap.arch.facts DERIVED)
    (("ptx_sm90",), ((b"griddepcontrol", False), (b"elect.sync", False), (b"mbarrier.try_wait", False),
                     (b"cudagriddependencysynchronize", False),
                     (b"cudatriggerprogrammaticlaunchcompletion", False))),
    (("ptx_sm100",), ((b"f32x2", False), (b"ffma2", False), (b"fmul2", False), (b"fadd2", False))),
    (("redux_f32",), ((b"redux.sync.max.f32", False), (b"redux.sync.min.f32", False),
                      (b"redux.sync.max.abs.f32", False), (b"redux.sync.max.nan.f32", False),
                      (b"redux.sync.max.abs.nan.f32", False), (b"redux.sync.min.abs.f32", False))),
)  # fmt: skip
_QUALIFIERS = (b"__global__", b"CUTLASS_GLOBAL", b"__device__", b"CUTLASS_DEVICE", b"CUTE_DEVICE",
               b"CUTLASS_HOST_DEVICE", b"CUTE_HOST_DEVICE")  # fmt: skip
_NAME = re.compile(rb"([A-Za-z_][\w:~]*)\s*(?:<[^;{}()]*>)?\s*\($")
_SKIP_NAMES = {b"__launch_bounds__", b"__align__", b"__attribute__", b"alignas", b"decltype", b"__declspec",
               b"__cluster_dims__", b"__maxnreg__", b"__noinline__", b"__forceinline__"}  # fmt: skip
_ASSIGNED = re.compile(rb"([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*(?:[-+*/|&^]|<<|>>)?=(?!=)")
_STUB_BYTES = 2048  # an empty, trapping or failing arm is shorter than this
_SMALL = 4096  # a function body with more than this beside a group holds more than declarations


@dataclass
class _Open:
    """A function body as the groups, in file order, find it: the brace depth at `pos`."""

    start: int  # its `{`
    kind: str
    name: str
    pos: int
    depth: int = 1
    closed: bool = False
    function: Function | None = None


def describe(data: bytes, groups: list[Group], errors: set[tuple[int, int]]) -> None:
    """Classify the arms of every arch-dependent group; find the function each sits in."""
    quals = _qualifiers(data)
    opens: dict[int, _Open | None] = {}
    for gi, g in enumerate(groups):
        if not g.archish:
            continue
        arms = []
        for ai, arm in enumerate(g.arms):
            end = max(arm.body_start, g.arms[ai + 1].offset if ai + 1 < len(g.arms) else g.end_offset)
            kind = classify(data[arm.body_start : end], (gi, ai) in errors)
            last = (g.arms[ai + 1].line if ai + 1 < len(g.arms) else g.end) - 1
            hint = direct.HINT.search(data, arm.body_start, end) is not None
            arms.append(dataclasses.replace(arm, body=kind, last=last, body_end=end, hint=hint))
        g.arms = arms
        fn = _enclosing(data, quals, opens, g.arms[0].offset) if quals else None
        if fn is None:
            continue
        if fn.function is None:
            fn.function = Function(fn.kind, fn.name, data.count(b"\n", 0, fn.start) + 1, fn.start)
        g.function = fn.function
        g.whole_body = _whole_body(data, fn.start, g)


def classify(body: bytes, has_error: bool) -> str:
    """What the arm compiles to (a long body is code: a stub is short)."""
    if len(body) > _STUB_BYTES:
        return CODE
    text = code(body)
    rest = _FAILING_ASSERT.sub(b"", text)
    if (has_error or rest != text) and not _NOTHING.sub(b"", _TRAP.sub(b"", rest)).strip():
        return ERROR
    rest = _TRAP.sub(b"", text)
    if _NOTHING.sub(b"", rest).strip():
        return CODE
    return TRAP if rest != text else EMPTY


def assigned(text: bytes) -> frozenset[bytes]:
    """The names a short arm assigns (`smem = ...`): two arms assigning the same ones compute the
    same values two ways (inline PTX on one arch, an intrinsic on the others)."""
    return frozenset(_ASSIGNED.findall(code(text)))


def code(body: bytes) -> bytes:
    if b"/" in body:  # a comment leaves its newlines: lines keep their numbers
        body = _COMMENTS.sub(lambda m: b"\n" * m[0].count(b"\n") or b" ", body)
    return _DIRECTIVE_LINE.sub(b"", body) if b"#" in body else body


def needs(text: bytes, first_line: int, where: str) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """Instruction-set needs spelled in `text`, each with its spelling and line."""
    low = text.lower()
    if not holds_any(low, _SPELLINGS):  # one pass rules out most texts (a find per spelling did)
        return (), ()
    out: list[tuple[str, ...]] = []
    seen: list[str] = []
    for feats, spellings in NEEDS:
        for word, starts_word in spellings:
            at = _word_at(low, word, starts_word)
            if at >= 0:
                out.append(feats)
                line = first_line + low.count(b"\n", 0, at)
                seen.append(f"'{word.decode()}' (line {line}{', ' + where if where else ''})")
                break
    return tuple(out), tuple(seen)


_SPELLINGS = tuple(word.decode() for _, spellings in NEEDS for word, _ in spellings)


def _word_at(low: bytes, word: bytes, starts_word: bool) -> int:
    at = low.find(word)
    tries = 0
    while starts_word and at > 0 and _word_byte(low[at - 1]) and tries < 32:
        at = low.find(word, at + 1)
        tries += 1
    return at if not starts_word or at <= 0 or not _word_byte(low[at - 1]) else -1


def _word_byte(c: int) -> bool:
    return 48 <= c <= 57 or 97 <= c <= 122 or c == 95


def _whole_body(data: bytes, start: int, g: Group) -> bool:
    """Is the group all of its function's body (beside shared-memory declarations)?"""
    head = data[start + 1 : g.arms[0].offset]
    if len(head) > _SMALL or head.count(b"{") != head.count(b"}"):
        return False
    tail = data[g.end_offset : g.end_offset + _SMALL]
    depth = 0
    for b in _BRACE.finditer(tail):
        depth += 1 if tail[b.start()] == 123 else -1
        if depth < 0:
            return _trivial(head + tail[: b.start()])
    return False


def _trivial(rest: bytes) -> bool:
    text = code(rest)
    parts = [p.strip() for p in text.split(b";")]
    return all(
        not p or p.startswith((b"extern __shared__", b"__shared__", b"using ", b"typedef ")) for p in parts
    )


def _qualifiers(data: bytes) -> list[tuple[int, bytes]]:
    """Where each function qualifier stands (a whole word), in order."""
    out: list[tuple[int, bytes]] = []
    for q in _QUALIFIERS:
        at = data.find(q)
        while at >= 0:
            before = data[at - 1] if at else 32
            after = data[at + len(q)] if at + len(q) < len(data) else 32
            if not (_word_byte(before | 32) or _word_byte(after | 32)):
                out.append((at, q))
            at = data.find(q, at + len(q))
    out.sort()
    return out


def _enclosing(
    data: bytes, quals: list[tuple[int, bytes]], opens: dict[int, _Open | None], offset: int
) -> _Open | None:
    """The innermost __global__ / __device__ function whose body is open at `offset` (groups come
    in file order: each body's brace depth is counted on from where the last group left it; a
    `}` at the start of a line closes it for good)."""
    i = bisect.bisect_left(quals, (offset, b""))
    for at, qual in reversed(quals[max(0, i - 8) : i]):
        if at not in opens:
            found = _signature(data, at + len(qual))
            kind = "kernel" if qual in (b"__global__", b"CUTLASS_GLOBAL") else "device"
            opens[at] = None if found is None else _Open(found[1], kind, found[0], found[1] + 1)
        fn = opens[at]
        if fn is None or fn.closed or fn.start >= offset:
            continue
        span = data[fn.pos : offset]
        fn.depth += span.count(b"{") - span.count(b"}")
        fn.pos = offset
        if fn.depth <= 0 or b"\n}" in span:
            fn.closed = True
            continue
        return fn
    return None


def _signature(data: bytes, pos: int) -> tuple[str, int] | None:
    """The function's name and where its body's `{` is, reading on from its qualifier."""
    limit = min(len(data), pos + 2000)
    while True:
        paren = data.find(b"(", pos, limit)
        if paren < 0:
            return None
        head = data[pos : paren + 1]
        if b";" in head or b"{" in head:
            return None
        close = _close_paren(data, paren, limit)
        if close is None:
            return None
        m = _NAME.search(data, max(pos, paren - 300), paren + 1)
        if m is None:
            return None
        if m[1] in _SKIP_NAMES:
            pos = close + 1
            continue
        brace = data.find(b"{", close, limit)
        semi = data.find(b";", close, limit)
        if brace < 0 or (0 <= semi < brace):
            return None
        return m[1].decode("utf-8", "replace"), brace


def _close_paren(data: bytes, paren: int, limit: int) -> int | None:
    depth = 0
    for i in range(paren, limit):
        c = data[i]
        if c == 40:  # (
            depth += 1
        elif c == 41:
            depth -= 1
            if depth == 0:
                return i
    return None


_BRACE = re.compile(rb"[{}]")
