"""Read one Python module's syntax tree into `FileFacts`: candidate tables, their reads, helpers
that may be capability predicates, and gate sites. Nothing is judged against an arch here."""

from __future__ import annotations

import ast
import codecs
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeGuard

from capgap.judging import (
    backends,
    callees,
    callsites,
    classbounds,
    evidence,
    flagguards,
    gatedimports,
    handedflags,
    kernel_specs,
    libraries,
    opkernels,
    outcomes,
    overwritten,
    prose,
    raisingcalls,
    refusalflags,
    registered,
    remarks,
    runs,
    sizesaid,
    surroundings,
    tablereads,
    tileconfigs,
    torchimpls,
)
from capgap.judging import named as by_name  # (`named` is a decision's arch names here)
from capgap.judging.demands import demanded as demands_of
from capgap.judging.keys import classify_keys, resolve_value
from capgap.judging.records import (
    OWN_KERNEL_CODE,
    Arm,
    Decision,
    FeatureGuard,
    FileFacts,
    HelperDef,
    Scope,
    TableDef,
    TableKey,
    TableUse,
    bind,
)
from capgap.judging.refusals import refused
from capgap.judging.statements import (
    capish_key,
    exits,
    flat,
    forget_walks,
    made_of_constants,
    refuses,
    short,
    summary,
    unset_settings,
    walk,
)
from capgap.judging.symbolic import CAP_NAME, call_name
from capgap.reading.hintlines import HintLines, holds_any, line_matches, lines_holding

_ARCH_WORDS = re.compile(
    r"capabilit|arch|\bsm\b|sm_?\d|\bcc\b|compute|gpu|device|major|hopper|blackwell", re.I
)
# Text that a statement must contain before its expressions are walked for table reads.
_HINTS = (
    "capab",
    "sm_",
    "_sm",
    ".sm",
    "(sm",
    "sm1",
    "sm9",
    "sm8",
    "arch",
    "major",
    "_cc",
    "cc_",
    "(cc",
    ".cc",
)
_GATE_HINTS = ("capab", "sm", "cc", "major", "blackwell", "hopper", "ampere", "arch")
# Names in a test that make it worth evaluating as a gate (helpers are named after archs).
_GATEISH = re.compile(
    r"capab|(^|_)sm_?(\d|$|_|version)|(^|_)cc($|_)|major|blackwell|hopper|ampere|(^|_)arch($|_)", re.I
)
_COMMENT = re.compile(r"#[^\n]*")
# a string statement of its own lines: a docstring, not an argument (`asm("""tcgen05.mma ...""", ...)`)
_DOCSTRING = re.compile(
    r'^[ \t]*[rub]{0,2}(?:"""(?:(?!""")[\s\S])*"""|\'\'\'(?:(?!\'\'\')[\s\S])*\'\'\')[ \t]*$', re.M
)
_CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")  # `SUPPORTED_TP_SIZES`, not `X` or `Tensor`
_WHOLE_HELPER_LINES = 60  # a helper this long or shorter is kept whole
_GUARDED_LINES = 400  # what a gate guards is read this far at most
_CONSUMER_LINES = 30  # of each branch elsewhere that tests a flag or predicate
# Marks where an arm's own lines end and the branches that ask its answer elsewhere begin
_ELSEWHERE = (0, 0)
_KEPT_IN = re.compile(r"^(self\.\w+|\w+)\s*(?::[^=]+)?=\s*")  # `self.x = ` / `x: bool = `
# A branch that refuses in words: `raise X("...")`, `failures.append("...")`
_REFUSAL_LINE = re.compile(r"^\s*(?:raise\s+\w+\((?:\s*f?[\"']|\s*$)|\w+\.append\(\s*f?[\"'])")
_REFUSAL_LINES = 4  # a refusal's message, over a few lines
_EXITS = re.compile(r"^\s*(?:return\b|raise\b)")  # the last line of a branch that leaves
_KEPT_LINES = 40  # where a plain name that keeps a predicate's answer is read
_KEPT_OPENING = 4  # lines up to the `x = (` that a kept expression continues
_RETURNS_STRING = re.compile(r"^\s*return\s+[rbuf]*[\"'(]")  # `return f"page_size={n}"`, `return (`
_SETS_SENTENCE = re.compile(r"^\s*\w+ = [rbuf]*[\"'][^\"']* ")  # `reason = "the device is not ..."`
_MAX_CONSUMERS = 4
_GATE_VALUES = (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.Call)
# the lines a flag's expression may take and still be read as a capability test where the flag is
# tested (`use_tma_b = (bool(...) and ... and (family(90) or family(100)) and ...)`, 16 lines)
_SHORT_LINES = 20
# what a name a test reads may be bound to and still be a capability read (`cap = get_cap()`,
# `arch = _get_device_arch() if _arch is None else _arch`)
_BOUND_VALUES = (ast.Call, ast.Subscript, ast.Attribute, ast.BinOp, ast.IfExp, *_GATE_VALUES)
# Decorators that list the capabilities a function supports (FlashInfer's supported_compute_capability).
_DECORATOR = re.compile(r"capabilit|(?:^|_)archs?(?:$|_)|(?:^|_)sms?(?:$|_)", re.I)
_BRANCHES = re.compile(r"\b(?:if|elif|while)\b")
_FLAG_DENIES = re.compile(
    r"unsupported|not_supported|disable|skip|block|deny|exclude|broken|fallback|deprecat|workaround", re.I
)
# Predicate names in a test (`is_sm100`, `has_device_capability`) say which arch, not what it needs.
_PREDICATE_NAMES = evidence.PREDICATE_NAMES
# A predicate name that spells an arch (`is_sm100`, `has_device_capability`, `is_blackwell`) says
# which arch; one that names a library or kernel (`has_flashinfer_trtllm_fused_moe`) says what the
# path runs, and is read like the rest of the code.
_SPELLS_ARCH = re.compile(
    r"sm_?\d|\d{2,3}[afx]?(?:_|$)|hopper|blackwell|ampere|ada_|lovelace|capab|arch|famil|(?:^|_)cc(?:_|$)|major|device",
    re.I,
)


def _add_needs(
    needs: list[tuple[str, ...]], where: list[str], found: Iterable[tuple[tuple[str, ...], str]]
) -> None:
    """Each need of `found` the arm does not have yet, with what it was read from, after those it has."""
    for need, word in found:
        if need not in needs:
            needs.append(need)
            where.append(word)


def _predicate_needs(code: str, first_line: int) -> Iterator[tuple[tuple[str, ...], str]]:
    """The needs the predicate names in `code` spell that pin one feature
    (`has_flashinfer_trtllm_fused_moe`: tcgen05), each with the name and its line. A name that
    spells an arch says which arch; one of a library that spans MMA generations
    (`is_deep_gemm_supported`: wgmma or tcgen05) asks what the engine checks for itself."""
    if "_" not in code:
        return
    for hit in _PREDICATE_NAMES.finditer(code):
        name = hit[0]
        if _SPELLS_ARCH.search(name):
            continue
        for need in evidence.needs_in(name.lower()):
            if len(need) == 1:
                line = f" (line {first_line + code.count(chr(10), 0, hit.start())})" if first_line else ""
                yield need, f"'{name}()'{line}"


# How a module asks the GPU it runs on (lowercased): a capability or property query, a platform
# object, a helper named for an arch (`is_sm90`, `is_hopper`, `sm100_supported`), the CUDA arch
# of the build or the environment.
_ASKS_DEVICE = re.compile(
    rb"capabilit|device_propert|torch\.cuda|cuda\.get|platform|nvidia.smi|device_sm|sm_version"
    rb"|\bis_\w*(?:sm_?\d|hopper|blackwell|ampere|ada)|sm_?\d+\w*_supported|\bget_\w*arch\w*\("
)


# (test or None, its line, the statements it runs or None, the file lines it spans, action, summary)
_MAX_CALLS = 16  # the calls of a function read for the strings they pass it
_CALL_LINES = 12  # the lines of one call read for its keywords
_MAX_PASSED = 6
ArmSpec = tuple["ast.expr | None", int, "list[ast.stmt] | None", "list[tuple[int, int]]", str, str]


class Whole(Protocol):
    """Where a statement the cut kept in part ends in the file, and the file's own lines."""

    ends: dict[int, int]

    def lines(self) -> list[str]: ...

    def joined(self) -> str: ...  # "\n".join(self.lines())

    def lowered(self) -> str | bytes: ...  # the file lowercased, for `in` tests of ASCII words


def extract(
    tree: ast.Module,
    lines: list[str],
    path: str,
    module: str,
    whole: Whole | None = None,
    *,
    data: bytes | None = None,
) -> FileFacts:
    """`data`: the bytes `lines` were split from, if they decode as UTF-8 (finds hint lines in C)."""
    facts = FileFacts(path, module)
    forget_walks()  # the last file's nodes are let go
    _Walker(facts, lines, whole, data).block(tree.body, [], facts.module_scope, None, is_module=True)
    # what the statement cut drops (imports, feature checks, source names) is read on the file's own
    # text, joined and lowercased once
    text = whole.joined() if whole is not None else "\n".join(lines)
    low = whole.lowered() if whole is not None else text.lower()
    kernel_facts(facts, text, low, whole.lines() if whole is not None else lines)
    _native_sources(facts, text)  # a JIT module without decisions still tells its importers what they run
    if facts.decisions:
        facts.asks_device = _ASKS_DEVICE.search(low if isinstance(low, bytes) else low.encode()) is not None
    if facts.tables or facts.decisions:
        _sibling_imports(facts, text)
    if facts.uses or facts.decisions:  # a path that checks the feature itself turns off, not crashes
        _feature_guards(facts, text, low)
    if facts.uses and facts.guards:  # a blocker is a check in the function that reads the table
        _functions(facts, tree, whole)
    if facts.uses:
        tablereads.lift_inside(facts.uses, tree)
    if facts.decisions:
        facts.tile_configs, facts.calls = tileconfigs.read(text)
        facts.either = or_partners(text)
        facts.callers = callsites.read(text)
        facts.loads_by_name = holds_any(low, gatedimports.DYNAMIC)
    # what a backend registered by name runs (judging.named)
    facts.registered, factories = by_name.registrations(text, module, path.endswith("__init__.py"))
    facts.factories = factories if facts.registered else {}
    facts.kernel_specs = kernel_specs.read(text)  # kernels registered per op with their archs
    facts.private_calls = callsites.private_calls(text)
    facts.gated_imports, facts.top_imports = gatedimports.read(
        text, whole.lines() if whole is not None else lines, module, path.endswith("__init__.py")
    )
    if facts.decisions:  # what a flag a decision sets guards in another method (judging.flagguards)
        facts.flag_imports = flagguards.read(text, module, path.endswith("__init__.py"))
    classbounds.read_checks(facts, text)  # `cap > cls.MAX`: how a base class reads the bounds
    if facts.class_bounds:
        classbounds.add_needs(facts, low if isinstance(low, str) else text.lower())
    return facts


# `a() or (b())`, `a(x) or b(x)`: two calls joined by `or` (a line break or parenthesis between)
_OR_CALLS = re.compile(r"\b([A-Za-z_]\w*)\([^()]*\)\s*\)?\s*or\s*\(?\s*(?:\w+\.)*([A-Za-z_]\w*)\([^()]*\)")


# The `)` closing a call that `or` follows: what every _OR_CALLS match holds after its first call
_OR_PIVOT = re.compile(r"\)(?=\s*\)?\s*or)")
_DEF_NAME = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


def or_partners(text: str) -> dict[str, tuple[str, ...]]:
    """Each function the module defines -> the functions it defines that some `or` joins it with
    (`return _varlen_ok() or _flattened_ok()`): an arch one predicate turns away, the other may let
    through to the same yes."""
    hits = list(_or_calls(text))
    if not hits:
        return {}
    defined = {hit[1] for hit in line_matches(_DEF_NAME, text, "def")}
    out: dict[str, set[str]] = {}
    for hit in hits:
        a, b = hit[1], hit[2]
        if a != b and a in defined and b in defined:
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return {name: tuple(sorted(others)) for name, others in out.items()}


def _or_calls(text: str) -> Iterator[re.Match[str]]:
    """`_OR_CALLS.finditer(text)`, tried only where a match can start: a regex led by `\\b` and a
    character class is otherwise tried at every position of the file. Each match's first call ends
    at a `)` that `or` follows (a pivot); its `(` is the nearest paren before that, and its name the
    word ending there, so each pivot gives one start. Tried in order, past the last match's end,
    as finditer does (a match at a start does not depend on where the search began)."""
    starts: list[int] = []
    for pivot in _OR_PIVOT.finditer(text):
        q = pivot.start()
        k = max(text.rfind("(", 0, q), text.rfind(")", 0, q))
        if k <= 0 or text[k] != "(":
            continue
        s = k
        while s > 0 and (text[s - 1].isalnum() or text[s - 1] == "_"):  # re's \w, as str says
            s -= 1
        if s < k:
            starts.append(s)
    after = 0
    for s in sorted(set(starts)):
        if s < after:
            continue
        hit = _OR_CALLS.match(text, s)
        if hit is not None:
            after = hit.end()
            yield hit


def kernel_facts(facts: FileFacts, text: str, low: str | bytes, lines: list[str] | None = None) -> None:
    """What the module evidently needs, read from its imports, its own kernels, its path and its
    docstring and comments (`lines`: the file's own; split from `text` when not given)."""
    _import_needs(facts, text, low)
    _smem_needs(facts, text, low)
    _own_kernels(facts, text, low)
    facts.entries = libraries.entries(text, low, lines, facts.module, facts.path.endswith("__init__.py"))
    facts.named_modules = libraries.named_modules(text, low, lines)
    remarks.add_path_needs(facts)
    _arch_module_imports(facts, text)
    spelled_facts(facts, low)
    if remarks.may_state(low):
        own = lines if lines is not None else text.splitlines()
        remarks.add_module_needs(facts, own, text)
        remarks.add_statement_needs(facts, own)


def spelled_facts(facts: FileFacts, low: str | bytes) -> None:
    """What the module spells that a kernel family needs, and the archs it names (judging.named):
    what a backend it is the module of runs."""
    low_text = low.decode("utf-8", "replace") if isinstance(low, bytes) else low
    # lowercased UTF-8 bytes decode and encode back to themselves: spelled need not encode them again
    raw = low if isinstance(low, bytes) and low.isascii() else None
    facts.spelled, facts.spelled_from, facts.names_archs = by_name.spelled(low_text, raw)


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# `if handle.multicast_ptr == 0:` / `if not has_multicast(...)`: read on the file's own lines, since
# the statement cut keeps only what names a capability.
_FEATURE_TEST = re.compile(
    r"^[ \t]*(?:el)?if\b[^\n]*?(multicast|nvls|mnnvl|nvswitch)[^\n]*:[ \t]*(?:#.*)?$", re.M | re.I
)


_FEATURE_WORDS = ("multicast", "nvls", "mnnvl")


def _feature_guards(facts: FileFacts, text: str, low: str | bytes) -> None:
    if not holds_any(low, _FEATURE_WORDS):
        return
    lines: list[str] | None = None
    for hit in line_matches(_FEATURE_TEST, text, ":"):  # (its matches hold their colon)
        needs, _ = evidence.needs_with_evidence(hit[0].lower())
        needs = [n for n in needs if n in (("nvls_multicast",), ("nvswitch",))]
        if needs:
            lines = text.split("\n") if lines is None else lines
            line = _line_at(text, hit.start())
            off = tablereads.turns_off(lines, line)
            facts.guards.append(FeatureGuard(line, hit[0].strip(), needs, "", turns_off=off))


def _functions(facts: FileFacts, tree: ast.Module, whole: Whole | None) -> None:
    """The def each table read and feature check sits in (its line), innermost first."""
    spans: list[tuple[int, int]] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:  # statements only: a def is never inside an expression that matters here
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            if whole is not None:
                end = max(end, whole.ends.get(node.lineno, end))
            spans.append((node.lineno, end))
        for name in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, name, ()))
    if not spans:
        return

    def inner(line: int) -> int:
        return max((start for start, end in spans if start <= line <= end), default=0)

    for use in facts.uses:
        use.function = inner(use.line)
    for guard in facts.guards:
        guard.function = inner(guard.line)


_SOURCE_NAME = re.compile(r"""["']([\w./{}\-]*?\.cuh?)["']""")


# A source directory the module names: `csrc/gdn/cake/manifest.json` in its words, `CSRC_DIR /
# "cake_mamba_ssd_combined"` or `... / "csrc" / "gdn" / "cake"` in its code.
_SOURCE_DIR = re.compile(
    r"""\bcsrc/((?:[\w\-]+/)+)|csrc\w*["']?\)?((?:[ \t]*/[ \t]*["'][\w\-]+["'])+)""", re.I
)


# The `csrc/` directory beside the module itself: `Path(__file__).resolve().parent / "csrc"`,
# `os.path.join(os.path.dirname(__file__), "csrc")` (a package that ships its own sources)
_OWN_SOURCE_DIR = re.compile(
    r"""(?:__file__\)(?:\.resolve\(\))?\.parent[ \t]*/|dirname\(__file__\)[ \t]*,)[ \t]*["']csrc["']"""
)


def _native_sources(facts: FileFacts, text: str) -> None:
    """The `.cu` / `.cuh` files the module names; an f-string's `{...}` part matches anything;
    and the source directories it names (`gdn/cake/`, with the trailing slash; the module's own
    `csrc/` as its path in the tree)."""
    if ".cu" in text:
        for hit in _on_lines_with(_SOURCE_NAME, text, ".cu"):
            name = re.sub(r"\{[^}]*\}", "*", hit[1])
            if name not in facts.sources and name.rsplit("/", 1)[-1] not in {"*.cu", "*.cuh"}:
                facts.sources.append(name)
    for word in ("csrc", "CSRC"):
        for hit in _on_lines_with(_SOURCE_DIR, text, word):
            parts = hit[1] or "/".join(re.findall(r"""["']([\w\-]+)["']""", hit[2])) + "/"
            if parts.strip("/") and parts not in facts.sources:
                facts.sources.append(parts)
    if any(_on_lines_with(_OWN_SOURCE_DIR, text, "__file__")):
        own = facts.path.rpartition("/")[0] + "/csrc/"
        if own.strip("/") != "csrc" and own not in facts.sources:
            facts.sources.append(own)


def _on_lines_with(pattern: re.Pattern[str], text: str, literal: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern whose matches hold `literal` and never span a line:
    searched only on the lines that hold it (a regex led by a character class tries every
    position of a file; `str.find` jumps to the few lines worth it)."""
    for start, end in lines_holding(text, literal):
        yield from pattern.finditer(text, start, end)


_SIBLING_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+)(\w+(?:\.\w+)*|)[ \t]+import[ \t]+\(?([\w, \t]*)", re.M)


def _sibling_imports(facts: FileFacts, text: str) -> None:
    """The modules of its own package it imports (`from .cake_jit import ...`, `from . import x`),
    and those a relative import names further up (`from ...jit.cake_gdn_cp_backend import ...`),
    read on the file's own lines: the cut drops imports that name no capability."""
    if "from ." not in text:
        return
    is_package = facts.path.endswith("__init__.py")
    for hit in _on_lines_with(_SIBLING_IMPORT, text, "from"):
        base = callees.relative_package(facts.module, is_package, len(hit[1]))
        if not base:  # above the top, or the top itself: no package of its own
            continue
        names = [hit[2]] if hit[2] else [n.split(" as ")[0].strip() for n in hit[3].split(",")]
        for name in filter(None, names):
            module = ".".join([*base, name])
            if module not in facts.siblings:
                facts.siblings.append(module)


# An import of an arch-specific instruction set: `from cutlass.cute.nvgpu import tcgen05`. Read on
# the file's own lines (the statement cut drops imports that name no capability).
_NEED_IMPORT = re.compile(
    r"^[ \t]*(?:from|import)[ \t][^\n]*?\b(tcgen05|warpgroup|wgmma|tmem\w*|umma\w*|multimem\w*)\b",
    re.M | re.I,
)


_IMPORT_WORDS = ("tcgen05", "warpgroup", "wgmma", "tmem", "umma", "multimem")


def _import_needs(facts: FileFacts, text: str, low: str | bytes) -> None:
    if not holds_any(low, _IMPORT_WORDS):  # rules out nearly every file
        return
    for hit in _import_lines(text, low):
        needs, _ = evidence.needs_with_evidence(hit[1].lower())
        for need in needs:
            if need not in facts.needs:
                facts.needs.append(need)
                facts.needs_from.append(f"'{hit[1]}' imported at line {_line_at(text, hit.start())}")


# An import of a module whose path names the arch it is written for (`from
# vllm.third_party.fmha_sm100.api import plan`, at any depth), and any arch a module path names
_ARCH_MODULE_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+([\w.]*sm_?\d[\w.]*)", re.M)
_ANY_ARCH_IN_PATH = re.compile(r"(?:^|[/_])sm_?(\d{2,3}|\d{1,2}x)[af]?(?=$|[/_.])")


def _arch_module_imports(facts: FileFacts, text: str) -> None:
    """What the packages the file imports from say by their paths they are written for, when every
    arch its imports name is the same (a module importing `fmha_sm100` and `fmha_sm120` dispatches;
    it is written for neither)."""
    if "sm" not in text:
        return
    found: list[tuple[str, int]] = []
    archs: set[str] = set()
    for hit in _on_lines_with(_ARCH_MODULE_IMPORT, text, "sm"):  # each match is one line holding "sm"
        path = hit[1].replace(".", "/").lower()
        named = _ANY_ARCH_IN_PATH.findall(path)
        archs.update(n[:-1] for n in named)  # the major: `sm100` -> 10, `sm_90a` -> 9, `sm12x` -> 12
        package = path.rpartition("/")[0]
        if named and remarks.path_need(package) is not None:
            # a package named for an arch (`fmha_sm100/`) holds that arch's code; a module named for
            # one (`flash_fwd_sm100.py`) is one variant among its siblings, which a dispatcher imports
            found.append((hit[1], hit.start()))
    if len(archs) != 1 or not found:
        return
    need = remarks.path_need(found[0][0].replace(".", "/").rpartition("/")[0])
    if need is not None and need not in facts.needs:
        facts.needs.append(need)
        facts.needs_from.append(f"'{found[0][0]}' imported at line {_line_at(text, found[0][1])}")


# The shared memory a kernel the module launches is given: `SMEM_BYTES = 192256`,
# `"dynamic_smem_bytes": 226816`, `smem_bytes=24576` (not a device's limit: `SMEM_CAP_BYTES`).
# Its value right after the name: `"dynamic_smem_bytes": 226816`, `SMEM_BYTES = (\n 226816`.
_SMEM_VALUE = re.compile(r"""["']?[ \t]*[:=][ \t]*\(?\s*(\d{4,7})\b""")
_SMEM_USE = re.compile(r"bytes|size|total", re.I)
_SMEM_NOT_USE = re.compile(r"max|limit|cap|avail|per_?sm|budget|free|remain|total_?smem_?per", re.I)
_IDENT_TAIL = re.compile(r"\w*")
_SMEM_WORDS = ("smem", "shared_mem", "sharedmem")


def _smem_words(text: str, low: str | bytes) -> Iterator[tuple[int, int]]:
    """(offset, length) of each _SMEM_WORDS spelling in `text`, any case: found in `low` where its
    offsets are the text's (its lowercased str, or its bytes when all ASCII), else in a lowered copy."""
    if isinstance(low, bytes) and len(low) == len(text):
        for word in _SMEM_WORDS:
            spelled = word.encode()
            at = low.find(spelled)
            while at != -1:
                yield at, len(word)
                at = low.find(spelled, at + len(word))
        return
    if isinstance(low, bytes) or len(low) != len(text):
        low = text.lower()
        if len(low) != len(text):  # a character that lowercases to two: offsets would not line up
            return
    for word in _SMEM_WORDS:
        at = low.find(word)
        while at != -1:
            yield at, len(word)
            at = low.find(word, at + len(word))


def _smem_needs(facts: FileFacts, text: str, low: str | bytes) -> None:
    """The most shared memory per block a kernel of the module is stated to launch with, as a
    need when some arch cannot give that much (evidence.smem_need)."""
    if not holds_any(low, _SMEM_WORDS):
        return
    best = (0, "", 0)
    for at, size in _smem_words(text, low):
        last = _IDENT_TAIL.match(text, at + size).end()  # type: ignore[union-attr]
        hit = _SMEM_VALUE.match(text, last)
        if hit is not None:  # the name the word is part of, and its value
            first = at
            while first > 0 and (text[first - 1].isalnum() or text[first - 1] == "_"):
                first -= 1
            name, value = text[first:last], int(hit[1])
            if value > best[0] and _SMEM_USE.search(name) and not _SMEM_NOT_USE.search(name):
                best = (value, name, first)
    need = evidence.smem_need(best[0]) if best[0] else None
    if need is not None and need not in facts.needs:
        facts.needs.append(need)
        facts.needs_from.append(f"'{best[1]}' {best[0]} bytes (line {_line_at(text, best[2])})")


# A kernel defined in the module itself, in one of the Python kernel languages.
_KERNEL_DEF = re.compile(
    # cuTile's `@ct.kernel` (`import cuda.tile as ct`) as well: tile code the compiler lowers per arch
    r"^[ \t]*@(cute\.kernel|triton\.jit|(?:T|tilelang)\.prim_func|tilelang\.jit|tl\.jit"
    r"|ct\.kernel|cuda\.tile\.kernel)\b",
    re.M,
)


def _own_kernels(facts: FileFacts, text: str, low: str | bytes) -> None:
    if "@" not in text:
        return
    hit = next(_on_lines_with(_KERNEL_DEF, text, "@"), None)
    if hit is not None:
        facts.kernels = f"{OWN_KERNEL_CODE}{hit[1]} code (line {_line_at(text, hit.start())})"
        _kernel_code_needs(facts, low)


# Instruction sets a kernel's own code spells (`prims.tcgen05_fence(...)`, `make_tmem_ptr(...)`):
# what the module's kernels run, however they are imported. Names of kernel families (`fa3`,
# `_sm90`) are left out: in code they are as often a flag's or a variable's name.
_INSTRUCTION_WORDS = ("tcgen05", "tmem", "umma", "wgmma", "warpgroup", "multimem", "cta_group", "redux")


def _kernel_code_needs(facts: FileFacts, low: str | bytes) -> None:
    """The instruction-level needs the module's code (`low`: lowercased; its comments and docstrings
    aside) spells."""
    if not holds_any(low, _INSTRUCTION_WORDS):
        return
    # (lowercased UTF-8 bytes decode to the lowercased text)
    code = low.decode("utf-8", "replace") if isinstance(low, bytes) else low
    # docstrings ("the tile ... feeds tcgen05" above a SIMT kernel), their lines kept for the count
    if '"""' in code or "'''" in code:
        code = _DOCSTRING.sub(lambda m: "\n" * m[0].count("\n"), code)
    code = _COMMENT.sub("", code) if "#" in code else code
    needs, where = evidence.needs_with_evidence(code, 1, limit=None)
    for need, seen in zip(needs, where, strict=True):
        if any(word in seen for word in _INSTRUCTION_WORDS) and need not in facts.needs:
            facts.needs.append(need)
            facts.needs_from.append(f"{seen} in its kernel code")


_IMPORT_BYTES = tuple(word.encode() for word in _IMPORT_WORDS)


def _import_lines(text: str, low: str | bytes) -> Iterator[re.Match[str]]:
    """`_NEED_IMPORT.finditer(text)`, searched only on the lines that start with `from` or `import`
    and hold one of its words, when `low` is the file's lowercased UTF-8 bytes, line for line the
    text's (`Whole.lowered`): the regex (a `^` and re.I) tried every position of the file. Its
    matches never span a line; the dotless i and the dotted I, which it takes for an `i`, send the
    search to the regex itself."""
    if not isinstance(low, bytes) or b"\xc4\xb1" in low or b"\xc4\xb0" in low:
        yield from _NEED_IMPORT.finditer(text)
        return
    starts: set[int] = set()
    # the lines that start with `from` or `import` hold that word: far fewer of them than of
    # lines holding `tmem` in a kernel module
    for lead in (b"from", b"import"):
        for bol, eol in lines_holding(low, lead):
            head = low[bol + 3 if bol == 0 and low.startswith(codecs.BOM_UTF8) else bol : eol]
            if head.lstrip(b" \t").startswith((b"from", b"import")) and any(w in head for w in _IMPORT_BYTES):
                starts.add(bol)
    offset, done = 0, 0  # the text offset of byte offset `done` (a line start)
    for bol in sorted(starts):
        offset += len(low[done:bol].decode("utf-8-sig" if done == 0 else "utf-8"))
        done = bol
        end = text.find("\n", offset)
        yield from _NEED_IMPORT.finditer(text, offset, len(text) if end == -1 else end)


def _names_whole(line: str, name: str) -> bool:
    r"""Is `name` in the line as a whole name, not part of a longer one or an attribute of
    something (what `(?<![\w.])name(?!\w)` finds; `\w` is str.isalnum or `_`): plain finds,
    not a regex compiled for every flag."""
    at = line.find(name)
    while at != -1:
        end = at + len(name)
        before = line[at - 1] if at else " "
        after = line[end] if end < len(line) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        at = line.find(name, at + 1)
    return False


def _reads_unnegated(line: str, name: str) -> bool:
    """Does the line read `name` as a whole name other than as `not name`? A test that only asks
    `if not flag:` guards the fallback of the GPUs the flag leaves out, not the path it turns on."""
    at = line.find(name)
    while at != -1:
        if _names_whole(line[max(at - 1, 0) : at + len(name) + 1], name) and not line[:at].rstrip().endswith(
            ("not", "not (")
        ):
            return True
        at = line.find(name, at + 1)
    return False


def _kept_in(lines: list[str], i: int) -> re.Match[str] | None:
    """The assignment that keeps what line `i` (0-based) reads: its own (`supported = is_x(...)`),
    or one a few lines up that opens a parenthesis the line continues (`fuse = (` / `    self.flag
    and n <= 64` / `)`)."""
    head = lines[i].lstrip()
    kept = _KEPT_IN.match(head)
    if kept is not None:
        return kept
    indent = len(lines[i]) - len(head)
    for j in range(i - 1, max(-1, i - _KEPT_OPENING), -1):
        above = lines[j].lstrip()
        if len(lines[j]) - len(above) >= indent:
            continue  # a line of the same parenthesis
        opened = _KEPT_IN.match(above)
        return opened if opened is not None and above.rstrip().endswith("(") else None
    return None


def _asks_unnegated(line: str, name: str) -> bool:
    """Does the line read `name` (`self.flag`, `helper`, `self.helper` too) other than as `not
    name`, not as part of a longer name?"""
    at = line.find(name)
    while at != -1:
        before = line[at - 1] if at else " "
        end = at + len(name)
        after = line[end] if end < len(line) else " "
        whole = not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")
        if whole and not line[:at].rstrip().removesuffix("self.").removesuffix("cls.").rstrip().endswith(
            ("not", "not (")
        ):
            return True
        at = line.find(name, at + 1)
    return False


def _buckets_capability(arms: list[list[ast.stmt] | None]) -> bool:
    """Does every arm only set one capability-named variable, to an SM number or to the device's
    own capability, and one arm to the latter (`if is_device_capability_family(100): cc = 100`
    `else: cc = capability.to_int()`)? That folds a family into one key for a lookup after it:
    the target keeps its own value, and what the lookup lacks is the table's finding."""
    names: set[str] = set()
    own = False
    for stmts in arms:
        if stmts is None:
            continue
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Assign) or len(stmts[0].targets) != 1:
            return False
        target, value = stmts[0].targets[0], stmts[0].value
        if not isinstance(target, ast.Name) or not CAP_NAME.search(target.id):
            return False
        names.add(target.id)
        if isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 30:
            continue
        if isinstance(value, (ast.Call, ast.Attribute, ast.Name)) and CAP_NAME.search(ast.unparse(value)):
            own = True
            continue
        return False
    return own and len(names) == 1


def _chained_get(value: ast.expr | None, call: ast.Call) -> ast.Call | None:
    """`T.get(cap, {}).get(n)`: the outer `.get` when `call` is the inner one with an empty default
    (no entry for the arch: the outer lookup finds nothing either)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return None
    if value.func.attr != "get" or value.func.value is not call or len(call.args) < 2:
        return None
    empty = call.args[1]
    return value if isinstance(empty, ast.Dict) and not empty.keys else None


class _Walker:
    def __init__(
        self, facts: FileFacts, lines: list[str], whole: Whole | None = None, data: bytes | None = None
    ) -> None:
        self.facts = facts
        self.lines = lines
        self.whole = whole
        self._gate_hints = HintLines(lines, _GATE_HINTS, data)
        self._def_line: dict[int, int] = {}  # a function's first statement line -> its `def` line
        self._use_hints = HintLines(lines, _HINTS, data)
        self._reacher: callees.Reacher | None = None  # what its arms call into, found once per file
        self._registrations: registered.Registrations | None = None  # backend -> requirement dicts
        self._subjects: list[str] = []  # strings the enclosing if-tests compare a setting with
        self._within: list[tuple[str, ...]] = []  # settings an enclosing if-test requires (`_required`)
        self._unset: list[str] = []  # settings an enclosing if-test asks to be unset (`_unset`)
        self._prose: list[surroundings.Opening] = []  # what the enclosing defs and classes open with
        self._defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = []  # the enclosing defs, innermost last
        self._module_prose: tuple[str, ...] | None = None  # arch sentences of the module's docstring
        self._own_helpers: tuple[int, set[str]] = (0, set())  # (helpers seen, their plain def names)
        self._helper_defs: dict[str, int] = {}  # a module-level function's name -> its `def` line (0: none)
        self._speaks_of_torch_impls: bool | None = None  # (judging.torchimpls), read once on first use
        # per statement (by id, the statement kept with it), what a positive arm gives settings
        # (named.values) and the names it assigns a setting from (_passed); per function, its callers' lines
        self._values: by_name.Memo = {}
        self._calls: dict[str, list[int]] = {}
        # does any function of the file return a string literal (outcomes.answers_with_reasons)?
        self._returns_strings = any("return" in line and _RETURNS_STRING.match(line) for line in lines)
        # and does any set a name to a sentence (outcomes.reason_names)?
        self._sets_sentences = any(_SETS_SENTENCE.match(line) for line in lines)

    @staticmethod
    def _span(node: ast.AST) -> tuple[int, int]:
        start = getattr(node, "lineno", 0)
        return start, getattr(node, "end_lineno", start) or start

    def _comments_above(self, line: int) -> str:
        """The comment block right above a line, and the line itself (a trailing comment)."""
        out = [self.lines[line - 1]] if 0 < line <= len(self.lines) else []
        i = line - 2
        while i >= 0 and self.lines[i].lstrip().startswith("#"):
            out.append(self.lines[i])
            i -= 1
        return "\n".join(out)

    def _hinted(self, node: ast.AST) -> bool:
        """Could this code read a capability (or call what does)? Keeps helpers and scopes small."""
        return self._gate_hints.any_in(*self._span(node))

    def _worth_binding(self, value: ast.expr) -> bool:
        """Constants (table values resolve through them) and anything that may read a capability."""
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Dict):
            return False
        if self._hinted(value):
            return True
        short = (
            getattr(value, "end_lineno", 0) == value.lineno
            and (value.end_col_offset or 0) - value.col_offset < 120
        )
        return short and made_of_constants(value)

    def statement_text(self, st: ast.stmt) -> str:
        """A simple statement's exact source (its columns are UTF-8 byte offsets)."""
        first, last = st.lineno, st.end_lineno or st.lineno
        lines = self.lines[first - 1 : last]
        if first == last:
            return lines[0].encode()[st.col_offset : st.end_col_offset].decode()
        head = lines[0].encode()[st.col_offset :].decode()
        tail = lines[-1].encode()[: st.end_col_offset].decode()
        return "\n".join([head, *lines[1:-1], tail])

    def _torch_impls(self) -> bool:
        """Does the module speak of torch's flash-attention implementation registry (judging.torchimpls)?"""
        if self._speaks_of_torch_impls is None:
            self._speaks_of_torch_impls = torchimpls.speaks_of_registry(self._own_lines())
        return self._speaks_of_torch_impls

    def _own_lines(self) -> list[str]:
        """The file's own lines (the cut's, where no whole file is at hand)."""
        return self.whole.lines() if self.whole is not None else self.lines

    def src(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def block(
        self,
        body: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool = False,
        end: int = 1 << 30,
    ) -> None:
        """Walk one block; `end`: its last line in the file (what a gate in it guards ends there)."""
        consumed = -1  # the last statement an earlier decision took in (a run of guard clauses)
        for i, stmt in enumerate(body):
            rest = body[i + 1 :]
            after = (self.end_of(stmt) + 1, end)  # the rest of the block, in the file
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(stmt, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.ClassDef):
                classbounds.read_class(self.facts, stmt, self.statement_text(stmt))
                inner = Scope({}, scope)
                self._prose.append(self._def_prose(stmt))
                try:
                    self.block(stmt.body, [*chain, stmt.name], inner, inner, end=self.end_of(stmt))
                finally:
                    self._prose.pop()
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self.assign(stmt, rest, chain, scope, cls_scope, is_module, after, (body, i))
            elif isinstance(stmt, ast.ImportFrom) and is_module:
                self.imports(stmt)
            elif isinstance(stmt, ast.If):
                if i > consumed and not overwritten.before_read(stmt, rest, self._text_between):
                    consumed = self.if_decision(body, i, chain, scope, end)
                self.walk_if(stmt, body, i, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.Assert):  # what follows runs when the test is true
                said = outcomes.message_of(stmt.msg)
                fails = "fails the assert " + (f"'{short(said, 80)}'" if said else "(AssertionError)")
                self.assert_decision(stmt.test, stmt.msg, fails, stmt.lineno, rest, after, chain, scope)
            elif isinstance(stmt, ast.Expr) and (check := raisingcalls.read(stmt.value)) is not None:
                # `self._not_implemented_error_if(cap != (10, 0), "... supports SM100")`: an assert
                holds, error, words = check
                fails = raisingcalls.summary(error, outcomes.message_of(words) if words is not None else "")
                self.assert_decision(holds, words, fails, stmt.lineno, rest, after, chain, scope)
                self.exprs(stmt, stmt, body, i, scope, chain)
            elif isinstance(stmt, ast.Return) and chain and _boolean(stmt.value):
                self.return_decision(stmt, chain, scope)
                self.exprs(stmt, stmt, body, i, scope, chain)
            elif isinstance(stmt, ast.Try):
                clauses = [h.lineno for h in stmt.handlers] + [s.lineno for s in stmt.orelse + stmt.finalbody]
                self.block(stmt.body, chain, scope, cls_scope, is_module, min(clauses, default=1) - 1)
                stmt_end = self.end_of(stmt)
                for handler in stmt.handlers:
                    self.block(handler.body, chain, scope, cls_scope, is_module, stmt_end)
                self.block(stmt.orelse + stmt.finalbody, chain, scope, cls_scope, is_module, stmt_end)
                self.try_uses(stmt, scope)
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                orelse = getattr(stmt, "orelse", [])
                split = self._split(stmt, orelse)
                for field in ("iter", "test"):
                    if hasattr(stmt, field):
                        self.exprs(getattr(stmt, field), stmt, body, i, scope, chain)
                self.block(stmt.body, chain, scope, cls_scope, is_module, split)
                self.block(orelse, chain, scope, cls_scope, is_module, self.end_of(stmt))
            else:
                self.exprs(stmt, stmt, body, i, scope, chain)

    def assert_decision(
        self,
        test: ast.expr,
        words: ast.expr | None,
        fails: str,
        line: int,
        rest: list[ast.stmt],
        after: tuple[int, int],
        chain: list[str],
        scope: Scope,
    ) -> None:
        """An assert, or a call that raises as one: what follows runs where `test` holds; else it
        fails, its `words` saying what the path needs."""
        rest_arm: ArmSpec = (test, line, rest, [after], "positive", "continues")
        fail: ArmSpec = (None, line, None, [self._span(words)] if words is not None else [], "error", fails)
        self.decision("assert", [rest_arm, fail], chain, scope, line)

    def _text_between(self, first: int, last: int) -> str:
        """The file's own lines first..last (1-based, inclusive; none when last < first)."""
        return "\n".join(self._own_lines()[max(first, 1) - 1 : max(last, 0)])

    def end_of(self, stmt: ast.stmt) -> int:
        """A statement's last line in the file (the cut may have kept only part of it)."""
        if self.whole is not None and stmt.lineno in self.whole.ends:
            return self.whole.ends[stmt.lineno]
        return stmt.end_lineno or stmt.lineno

    def _split(self, stmt: ast.stmt, orelse: list[ast.stmt]) -> int:
        """The last file line of a compound statement's body (its `else:` follows)."""
        return orelse[0].lineno - 1 if orelse else self.end_of(stmt)

    def file_text(self, ranges: list[tuple[int, int]]) -> str:
        """The file's own lines in `ranges` (1-based, inclusive), at most _GUARDED_LINES of them."""
        lines = self._own_lines()
        kept = self._within_budget(ranges, len(lines))
        return "\n".join(line for first, last in kept for line in lines[first - 1 : last])

    def file_line_numbers(self, ranges: list[tuple[int, int]]) -> list[int]:
        """The file line of each line `file_text(ranges)` holds."""
        kept = self._within_budget(ranges, len(self._own_lines()))
        return [n for first, last in kept for n in range(first, last + 1)]

    @staticmethod
    def _within_budget(ranges: list[tuple[int, int]], n_lines: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        budget = _GUARDED_LINES
        for first, last in ranges:
            if (first, last) == _ELSEWHERE:
                continue
            last = min(last, n_lines, first + budget - 1)
            if first > last:
                continue
            out.append((first, last))
            budget -= last - first + 1
        return out

    def imports(self, stmt: ast.ImportFrom) -> None:
        base = stmt.module or ""
        if stmt.level:  # relative: resolve against this module's package
            package = callees.relative_package(
                self.facts.module, self.facts.path.endswith("__init__.py"), stmt.level
            )
            if package is None:  # above the top package: Python refuses it
                return
            base = ".".join([*package, base] if base else package)
        for alias in stmt.names:
            self.facts.imports[alias.asname or alias.name] = base

    def capability_decorator(
        self, dec: ast.expr, node: ast.FunctionDef | ast.AsyncFunctionDef, chain: list[str], scope: Scope
    ) -> None:
        """`@supported_compute_capability([90, 100, 103])`: the function is refused on the others."""
        if not (isinstance(dec, ast.Call) and dec.args and _DECORATOR.search(call_name(dec.func))):
            return
        listed = dec.args[0]
        if not (isinstance(listed, (ast.List, ast.Tuple, ast.Set)) and listed.elts):
            return
        if not all(isinstance(e, (ast.Constant, ast.Tuple)) for e in listed.elts):
            return
        test = ast.copy_location(
            ast.Compare(ast.Name("compute_capability", ast.Load()), [ast.In()], [listed]), dec
        )
        ast.fix_missing_locations(test)
        body = [(node.body[0].lineno, self.end_of(node))]
        if self._registrations is None:
            self._registrations = registered.Registrations(self._own_lines())
        body += self._registrations.guarded(node.name)  # what the function is registered to let run
        runs: ArmSpec = (test, dec.lineno, node.body, body, "positive", f"lets {node.name}() run")
        refused: ArmSpec = (
            None,
            dec.lineno,
            None,
            [],
            "error",
            f"refuses {node.name}(): 'unsupported compute capability'",
        )
        self.decision("decorator", [runs, refused], [*chain, node.name], scope, dec.lineno)

    def helper_source(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
        """A short helper's whole text (its guard clauses and several returns are one decision),
        parsed only if a call is evaluated; of a long function only what a predicate is made of
        (its returns and the assignments they may read): long functions are rarely predicates,
        and their text is what a scan's workers would otherwise send and keep."""
        if (node.end_lineno or node.lineno) - node.lineno <= _WHOLE_HELPER_LINES:
            return (self.statement_text(node),)
        return tuple(
            self.statement_text(st)
            for st in flat(node.body)
            if isinstance(st, ast.Return) or (isinstance(st, ast.Assign) and self._worth_binding(st.value))
        )

    def function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
    ) -> None:
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        if params and params[0] in {"self", "cls"}:
            params = params[1:]
        local = Scope({}, cls_scope or scope)
        if (is_module or cls_scope is not None) and self._hinted(node):
            is_method = cls_scope is not None and not is_module
            helper = HelperDef(node.name, "def", params, [], local, is_method, self.helper_source(node))
            self.facts.helpers.append(helper)
        first = next((st for st in node.body if not _docstring(st)), None)
        if first is not None:
            self._def_line[first.lineno] = node.lineno
        for dec in node.decorator_list:
            self.capability_decorator(dec, node, chain, scope)
        for dec in node.decorator_list:  # @skipIf(get_device_capability()[0] < 9, ...)
            if (
                isinstance(dec, ast.Call)
                and call_name(dec.func) in {"skipIf", "skipif", "skipUnless"}
                and dec.args
            ):
                body_lines = [(node.body[0].lineno, self.end_of(node))]
                skips: ArmSpec = (None, dec.lineno, None, [], "reject", "skips the test")
                runs: ArmSpec = (None, dec.lineno, node.body, body_lines, "positive", "runs the test")
                arms = (
                    [(dec.args[0], *skips[1:]), runs]
                    if call_name(dec.func) != "skipUnless"
                    else [
                        (dec.args[0], *runs[1:]),
                        skips,
                    ]
                )
                self.decision("skipif", arms, [*chain, node.name], scope, dec.lineno)  # type: ignore[arg-type]
        qualname = ".".join([*chain, node.name])
        for stmt in node.body:  # `check_arch(cc)`, `n, m = constraints(cc)`: calls that may raise
            value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                self.facts.checks.append((qualname, stmt.lineno, self.end_of(node), value.func.id))
        self._prose.append(self._def_prose(node))
        self._defs.append(node)
        try:
            with outcomes.reading(node, self._returns_strings, self._sets_sentences):
                self.block(node.body, [*chain, node.name], local, cls_scope, end=self.end_of(node))
        finally:
            self._prose.pop()
            self._defs.pop()

    def _def_prose(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> surroundings.Opening:
        """The sentences naming archs in a def's or class's docstring and leading comments, and
        the needs they state."""
        return surroundings.opening(self._own_lines(), node)

    def assign(
        self,
        stmt: ast.Assign | ast.AnnAssign,
        rest: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
        after: tuple[int, int] = (0, 0),
        place: tuple[list[ast.stmt], int] | None = None,
    ) -> None:
        """`place`: the block and the statement's index in it (a guard before it may refuse a key)."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        if self._worth_binding(value):
            bind(scope, targets, value)
            attrs = [t for t in targets if isinstance(t, ast.Attribute)]
            if attrs and cls_scope is not None and cls_scope is not scope:  # self.x = ... in a method
                bind(cls_scope, attrs, value)
        if isinstance(value, ast.Dict):
            for target in targets:
                self.table(target, value, chain, scope, cls_scope, stmt.lineno)
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if (
            is_module
            and names
            and isinstance(value, (*_GATE_VALUES, ast.Lambda, ast.Name))
            and self._hinted(value)
        ):
            for name in names:
                self.facts.helpers.append(HelperDef(name, "var", [], [ast.Expr(value)], scope))
        elif (
            chain
            and not is_module
            and cls_scope is not scope
            and isinstance(value, _GATE_VALUES)
            and self._gate_test(value, scope)
        ):
            self.flag_decision(stmt, targets, value, rest, chain, scope, after)
        if is_module and names and isinstance(value, ast.Dict):
            self.aliases(value)
        self.exprs(value, stmt, *(place or (rest, -1)), scope, chain)

    def table(
        self,
        target: ast.expr,
        value: ast.Dict,
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        line: int,
    ) -> None:
        if isinstance(target, ast.Name):
            name = target.id
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            name = target.attr
            chain = chain[:-1]  # self.X in a method: a class attribute
        else:
            return
        classified = self._keys(value, scope)
        if classified is None:
            return
        style, keys = classified
        above = self._comments_above(line)
        named = bool(CAP_NAME.search(name) or re.search(r"ARCH|(^|_)SM(_|$)|CAPAB|(^|_)CC(_|$)", name))
        end = value.end_lineno or line
        if self.whole is not None:
            end = max(end, self.whole.ends.get(line, end))
        own = self._own_lines()
        self.facts.tables.append(
            TableDef(
                ".".join([*chain, name]),
                name,
                line,
                style,
                keys,
                named or bool(_ARCH_WORDS.search(above)),
                self.src(line),
                remark=tablereads.remark(own, line, end),
                end=end,
            )
        )

    def if_decision(self, body: list[ast.stmt], i: int, chain: list[str], scope: Scope, end: int) -> int:
        """Record the decision `body[i]` starts: its elif chain and else, or, when every branch
        exits, the guard clauses that follow it and the rest of the block. Returns the index of the
        last statement it took in."""
        links, orelse = _chain(body[i])
        last = i
        kept: tuple[str, ...] = ()
        if not orelse and all(exits(b) for _, b, _ in links):
            while last + 1 < len(body) and isinstance(body[last + 1], ast.If):
                more, more_else = _chain(body[last + 1])  # type: ignore[arg-type]
                if more_else or not all(exits(b) for _, b, _ in more):
                    break
                links += more
                last += 1
        if not any(self._gate_test(test, scope) for test, _, _ in links):
            return last  # no test may read a capability: its arms are not worth reading
        arms: list[ArmSpec] = []
        for test, stmts, if_line in links:
            action, what = outcomes.classify(stmts)
            if action == "positive" and (why := self._flag_refusal(stmts, body[i].lineno)) is not None:
                action, what = "reject", why
            past = self._past_gate(stmts, action, body[i].lineno)
            span = [(stmts[0].lineno, self.end_of(stmts[-1])), *past]
            arms.append((test, if_line, stmts, span, action, what))
        if orelse:
            action, what = outcomes.classify(orelse)
            if action == "positive" and (why := self._flag_refusal(orelse, body[i].lineno)) is not None:
                action, what = "reject", why
            past = self._past_gate(orelse, action, body[i].lineno)
            span = [(orelse[0].lineno, self.end_of(orelse[-1])), *past]
            arms.append((None, orelse[0].lineno, orelse, span, action, what))
        elif all(exits(b) for _, b, _ in links):
            rest = body[last + 1 :]
            span = [(self.end_of(body[last]) + 1, end)]
            action, what = outcomes.classify(rest) if rest else ("positive", "carries on")
            # what is left after the guard clauses is the path, unless all it does is refuse
            action = "reject" if action == "reject" and len(rest) == 1 else "positive"
            arms.append((None, span[0][0], rest, span, action, f"carries on ({what})" if rest else what))
        else:
            arms.append((None, body[i].lineno, None, [], "nothing", "skips the branch"))
            # `x = "auto"` then `if is_sm100: x = "cutlass"`: skipping the branch keeps "auto"
            kept = by_name.kept(self._own_lines(), body[i].lineno, [stmts for _, stmts, _ in links])
        kind = "guards" if not orelse and all(exits(b) for _, b, _ in links) else "chain"
        rest = arms[-1][3][0] if kind == "guards" else (0, 0)
        predicate = any(a[5] == "returns False" for a in arms) and arms[-1][4] == "positive"
        if kind == "guards" and chain and predicate:
            # `if not family(100): return False` in a predicate: what its answer guards is where it is asked
            test, at, stmts, span, action, what = arms[-1]
            arms[-1] = (test, at, stmts, [*span, *self._elsewhere(f"{chain[-1]}(", span[0])], action, what)
        self.decision(
            kind,
            arms,
            chain,
            scope,
            body[i].lineno,
            rest,
            gated=True,
            prior=_resolved_before(self._own_lines(), body[i].lineno),
            kept=kept,
        )
        return last

    def _flag_refusal(self, stmts: list[ast.stmt], line: int) -> str | None:
        """When a branch only sets flags its function then refuses on, what it leads to
        (judging.refusalflags); None otherwise."""
        names = refusalflags.flags_set(stmts) if self._defs else None
        if names is None:
            return None
        fn = self._defs[-1]
        text = self._text_between(fn.lineno, self.end_of(fn))
        falsy = refusalflags.falsy_only(stmts)
        refusal = refusalflags.refusal_it_leads_to(text, fn.lineno, line, names, falsy)
        return None if refusal is None else refusalflags.said(names, refusal)

    def _past_gate(self, stmts: list[ast.stmt], action: str, line: int) -> list[tuple[int, int]]:
        """For a branch that only sets flags, the lines a later guard lets its values on to
        (judging.refusalflags.path_past_gate): where what it leads to is read."""
        values = refusalflags.constants_set(stmts) if action == "positive" and self._defs else None
        if values is None:
            return []
        fn = self._defs[-1]
        text = self._text_between(fn.lineno, self.end_of(fn))
        past = refusalflags.path_past_gate(text, fn.lineno, line, values)
        return [] if past is None else [past]

    def walk_if(
        self,
        stmt: ast.If,
        body: list[ast.stmt],
        i: int,
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
    ) -> None:
        """Table reads in the tests and decisions inside the branches; an elif is part of its chain."""
        self.exprs(stmt.test, stmt, body, i, scope, chain)
        split = self._split(stmt, stmt.orelse)
        compared = _compared_strings(stmt.test)
        required, unset = _required(stmt.test), unset_settings(stmt.test)
        self._subjects.extend(compared)
        self._within.extend(required)
        self._unset.extend(unset)
        try:
            self.block(stmt.body, chain, scope, cls_scope, is_module, split)
        finally:
            del self._subjects[len(self._subjects) - len(compared) :]
            del self._within[len(self._within) - len(required) :]
            del self._unset[len(self._unset) - len(unset) :]
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If):
            self.walk_if(stmt.orelse[0], stmt.orelse, 0, chain, scope, cls_scope, is_module)
        else:
            self.block(stmt.orelse, chain, scope, cls_scope, is_module, self.end_of(stmt))

    def return_decision(self, stmt: ast.Return, chain: list[str], scope: Scope) -> None:
        """`return cap == (9, 0) and x.is_cuda and ...`: the helper's answer is the decision (a
        pure capability predicate is a definition, which the rules leave to its callers)."""
        value = stmt.value
        assert value is not None
        if isinstance(value, ast.Call) and call_name(value.func) == "bool" and len(value.args) == 1:
            value = value.args[0]
        line = self._def_line.get(stmt.lineno, stmt.lineno)
        own = [(stmt.lineno, stmt.end_lineno or stmt.lineno)]  # `hasattr(gemm, "fp8_gemm_sm90")` is evidence
        # what the answer guards: the branches of this file that ask it (`if _can_fuse_wo_a(layer):`)
        own += self._elsewhere(f"{chain[-1]}(", own[0])
        # `def is_int4_deprecated(): return sm >= 90`: the yes of a predicate named for a restriction
        restricts = outcomes.named_for_a_restriction()
        yes_does, no_does = ("reject", "positive") if restricts else ("positive", "reject")
        yes: ArmSpec = (value, line, None, own, yes_does, "returns True")
        # where the answer is no, its callers' refusals say what the path requires
        told = self._refused_where_no(chain[-1], own[0]) if no_does == "reject" else []
        no: ArmSpec = (None, line, None, told, no_does, "returns False")
        self.decision("return", [yes, no], chain, scope, line)

    def _refused_where_no(self, name: str, own: tuple[int, int]) -> list[tuple[int, int]]:
        """The lines of the file where a caller refuses in words when the predicate `name` says no
        (`if not _device_supports_x(dev): return False, _UNSUPPORTED_REASON`), with the lines of a
        module constant the refusal gives (`_UNSUPPORTED_REASON = ("requires an SM100 ... device")`)."""
        lines = self._own_lines()
        asked = f"not {name}("
        out: list[tuple[int, int]] = []
        for i, line in enumerate(lines[:-1]):
            if asked not in line or own[0] <= i + 1 <= own[1] or not _NEGATED_TEST.match(line):
                continue
            refusal = lines[i + 1]
            hit = _SAYS_NO.match(refusal)
            if hit is None:
                continue
            out.append((i + 2, i + 2))
            if (
                hit["name"]
                and (at := surroundings.constant_lines(lines, hit["name"])) is not None
                and at not in out
            ):
                out.append(at)
            if len(out) >= _MAX_CONSUMERS:
                break
        return out

    def ifexp_decision(self, node: ast.IfExp, scope: Scope, chain: list[str]) -> None:
        if _prose(node):
            return  # `"SM100 auto default" if x else "moe_runner_backend=triton"`: words for a log line
        self._ifexp_decision(node, scope, chain)

    def _ifexp_decision(self, node: ast.IfExp, scope: Scope, chain: list[str]) -> None:
        arms: list[ArmSpec] = []
        while True:
            action, what = outcomes.expression_summary(node.body)
            arms.append((node.test, node.lineno, None, [self._span(node.body)], action, what))
            if not isinstance(node.orelse, ast.IfExp):
                break
            node = node.orelse
        action, what = outcomes.expression_summary(node.orelse)
        arms.append((None, node.lineno, None, [self._span(node.orelse)], action, what))
        # where it sits names its path as a statement's would (`DeepseekV4FlashMLAAttention`)
        self.decision("ifexp", arms, chain, scope, arms[0][1])

    def decision(
        self,
        kind: str,
        specs: list[ArmSpec],
        chain: list[str],
        scope: Scope,
        line: int,
        rest: tuple[int, int] = (0, 0),
        gated: bool = False,
        kept: tuple[str, ...] = (),
        prior: str = "",
    ) -> None:
        """Record a decision when one of its tests may read a capability (`gated`: the caller
        found one does; `kept`: the strings a skipped branch leaves its settings holding; `prior`:
        Decision.prior)."""
        tests = [t for t, *_ in specs if t is not None]
        if not gated and not any(self._gate_test(t, scope) for t in tests):
            return
        if kind == "chain" and _buckets_capability([stmts for _, _, stmts, *_ in specs]):
            return  # `cc = 100 if family(100) else cap.to_int()`: a key computed, no path chosen
        arms: list[Arm] = []
        sizes_said: list[sizesaid.SizeSaid] = []
        for test, arm_line, _stmts, span, action, what in specs:
            text = self.file_text(span) if span else ""
            # the arm's comments, those above its first statement included (None: it has none)
            words = self._arm_words(span[0][0], text) if _stmts is not None and span else None
            if words is not None:
                sizes_said += sizesaid.stated(words[0])  # "BLOCK_T=128 needs 122,880 bytes of shared memory"
            plain = _COMMENT.sub("", text)  # "no tcgen05 here" is no need: comments are read as words
            code = _PREDICATE_NAMES.sub("", plain)
            low = evidence.arch_names_unsaid(code).lower()
            at: int | list[int] = self.file_line_numbers(span) if len(span) > 1 else span[0][0] if span else 0
            needs, where = evidence.needs_with_evidence(low, at)
            first_line = span[0][0] if span else 0
            _add_needs(needs, where, _predicate_needs(plain, first_line))
            if words is not None:
                # "# The trtllm-gen kernels consume head-major blocks": what the arm's comments state
                said, seen = _arm_comments(words)
                _add_needs(needs, where, zip(said, [f"{w} in a comment" for w in seen], strict=True))
            _add_needs(needs, where, zip(*evidence.kernel_classes(code), strict=True))
            if "FA4" in code and self._torch_impls():
                _add_needs(needs, where, torchimpls.needs(code, first_line))
            mine = span[: span.index(_ELSEWHERE)] if _ELSEWHERE in span else span  # not branches elsewhere
            body = (mine[0][0], mine[-1][1]) if mine and _stmts is not None else (0, 0)
            named = tuple(dict.fromkeys(_ARCH_NAMED.findall(low))) if "sm" in low else ()
            # `raise E("requires SM100/SM103")`, `return False, _UNSUPPORTED_REASON` (a module's sentence)
            if action == "error":
                stated = _requirement(code + _named_sentences(_stmts, scope))
            elif action == "reject":
                # a refusal returned: its words are in the summary, but for a module constant's
                # sentence it gives, or its callers' refusals (no statements of its own)
                stated = _requirement(_named_sentences(_stmts, scope) if _stmts is not None else code)
            else:
                stated = ""
            source = self.src(arm_line)
            positive = action == "positive" and plain.strip()
            reaches = self._reaches(plain, chain) if positive else ()
            uses = self._reacher.direct(plain) if positive and self._reacher is not None else ()
            # torch ops the arm calls, or its test asks for (`hasattr(torch.ops._C, "x")`): the
            # images holding their kernels say what it runs (judging.opkernels)
            ops = self._ops(plain, test) if action == "positive" else ()
            said = prose.said(plain) if positive else ""
            notes = _arm_notes(words) if positive and words is not None else ()
            picks = backends.picked(plain if _stmts is not None else what) if positive else ()
            sizes = _sizes(_stmts) if positive and _stmts is not None else ()
            given = by_name.values(_stmts, self._values) if positive and _stmts is not None else ()
            if positive and _stmts is not None and chain:
                # `self.backend = default_backend`: the strings the function's callers pass it
                given += tuple(v for v in self._passed(_stmts, chain[-1]) if v not in given)
            if what == "skips the branch":
                given = kept
            demands = demands_of(_stmts) if _stmts is not None else ()
            refusals = refused(_stmts, lambda t: self._gate_test(t, scope)) if _stmts is not None else ()
            settings = by_name.settings(_stmts, self._values) if positive and _stmts is not None else ()
            arms.append(
                Arm(
                    test,
                    arm_line,
                    action,
                    what,
                    needs,
                    where,
                    source,
                    body,
                    named,
                    stated,
                    reaches,
                    said,
                    notes,
                    picks,
                    sizes,
                    given,
                    settings,
                    demands,
                    refusals,
                    uses,
                    ops,
                )
            )
        end = max((getattr(t, "end_lineno", line) or line for t in tests[:1]), default=line)
        subjects = [*self._subjects, *(w for t in tests for w in _compared_strings(t))]
        lines = self._own_lines()
        above, start = remarks.comment_block(lines, line) if 0 < line <= len(lines) else ("", line)
        above = above.rpartition("\n")[0]  # not the comment on the test's own line: it restates the test
        sentences = [*prose.arch_sentences(above), *prose.untested_sentences(above)]
        around = [f"the comment above (line {start})\t{s}" for s in sentences]
        sizes_said += sizesaid.stated(above)  # "num_stages=4 needs 108 KB" above `3 if is_sm121() else 4`
        if start == line:  # no comment of its own: one above a run of like tests speaks for it too
            first = tests[0] if tests else None
            around += runs.inherited(self.facts.decisions, line, kind, ".".join(chain), first)
            around += surroundings.setup_sentences(lines, line, tests)
        # (and the constants a path returns a test of: `return ptx_version >= QMUL4_MIN_PTX_VERSION`
        # under "# QMUL4 needs PTX ISA 9.4 and an sm_100a/sm_103a target.")
        returned = [
            st.value
            for _, _, stmts, _, action, _ in specs
            if action == "positive" and stmts
            for top in stmts
            for st in ast.walk(top)
            if isinstance(st, ast.Return) and isinstance(st.value, ast.Compare)
        ]
        around += surroundings.constant_sentences(lines, tests + returned, scope, line)
        around += surroundings.helper_sentences(lines, tests, self._helper_defs)
        around += [s for found in reversed(self._prose) for s in found.sentences]
        if self._module_prose is None:
            self._module_prose = surroundings.module_sentences(lines)
        around += self._module_prose
        opening = [
            pair
            for found in reversed(self._prose)
            for pair in zip(found.needs, found.needs_from, strict=True)
        ]
        self.facts.decisions.append(
            Decision(
                line,
                kind,
                arms,
                scope,
                self.src(line),
                ".".join(chain),
                end,
                subjects=tuple(dict.fromkeys(subjects))[:_MAX_SUBJECTS],
                within=tuple(dict.fromkeys(self._within))[:_MAX_SUBJECTS],
                unset=tuple(dict.fromkeys(self._unset))[:_MAX_SUBJECTS],
                prose=tuple(dict.fromkeys(around))[: prose.MAX_SENTENCES],
                sizes=tuple(dict.fromkeys(sizes_said)),
                opening=[n for n, _ in opening],
                opening_from=[w for _, w in opening],
                asks=self._asks(tests),
                prior=prior,
            )
        )

    def _asks(self, tests: list[ast.expr]) -> tuple[str, ...]:
        """The modules whose constants (`SUPPORTED_TP_SIZES`) the tests read, by the file's imports."""
        names = [n.id for t in tests for n in walk(t) if isinstance(n, ast.Name) and _CONSTANT.match(n.id)]
        if not names:
            return ()
        self._reaches("", [])  # the file's imports, found once
        assert self._reacher is not None
        found = (self._reacher.imports.get(name) for name in names)
        return tuple(dict.fromkeys(m.rpartition(".")[0] for m in found if m and "." in m))

    def _passed(self, stmts: list[ast.stmt], function: str) -> tuple[str, ...]:
        """The strings the calls of `function` in this file pass (as keywords) for the names the
        statements assign a setting from (`self.attention_backend = default_backend`, with
        `self._fill(default_backend="triton")` among its callers): parameters set per caller."""
        params = by_name.assigned_from(stmts, self._values)  # per statement, once (as `values`)
        if not params:
            return ()
        lines = self._own_lines()
        calls = self._calls.get(function)
        if calls is None:  # the file's lines calling it, found once per function
            calls = self._calls[function] = [
                i for i, line in enumerate(lines) if f"{function}(" in line and "def " not in line
            ]
        out: list[str] = []
        for name in sorted(params):
            passed = re.compile(
                rf"(?<![\w.]){re.escape(name)}[ \t]*=[ \t]*([\"'])([A-Za-z][\w\-.]{{0,47}})\1"
            )
            for i in calls[:_MAX_CALLS]:
                for line in lines[i : i + _CALL_LINES]:
                    out += [hit[2] for hit in passed.finditer(line)]
        return tuple(dict.fromkeys(out))[:_MAX_PASSED]

    def _ops(self, code: str, test: ast.expr | None) -> tuple[str, ...]:
        """The names of torch ops an arm's code calls or its test asks for (judging.opkernels)."""
        span = (test.lineno - 1, test.end_lineno or test.lineno) if test is not None else (0, 0)
        asked = "\n".join(self.lines[span[0] : span[1]])
        if "ops" not in code and "ops" not in asked:
            return ()
        return opkernels.op_names(f"{asked}\n{code}", self._made_reacher().imports)

    def _made_reacher(self) -> callees.Reacher:
        """The file's Reacher, made at its first use (most files record no positive arm)."""
        if self._reacher is None:
            lines = self._own_lines()
            package = self.facts.path.endswith("__init__.py")
            text = self.whole.joined() if self.whole is not None else "\n".join(lines)
            imports = callees.import_map(text, self.facts.module, package)
            self._reacher = callees.Reacher(imports, lines, text, self.facts.module, package)
        return self._reacher

    def _reaches(self, code: str, chain: list[str]) -> tuple[str, ...]:
        """The other modules a positive arm's code calls into (judging.callees)."""
        reacher = self._made_reacher()
        own = chain[-1] if chain else ""
        found = reacher.reached(code, own)
        guarded = reacher.flag_reads(code)
        if guarded:
            # `x._enable_fusion = True`: the kernel runs where the file reads the flag
            found = (*found, *reacher.reached(guarded, own))
        # a predicate's yes leads to what its name asks about (`_can_use_mega_mhc`: `mhc_mega_boundary`)
        return tuple(dict.fromkeys([*found, *reacher.subject(own)]))

    def _arm_words(self, first: int, text: str) -> tuple[str, int] | None:
        """An arm's comments, those above its first statement included, and the line they start
        at; None when it has none."""
        lines = self._own_lines()
        above, start = remarks.comment_block(lines, first) if 0 < first <= len(lines) else ("", first)
        if "#" not in text and first == start:
            return None
        return "\n".join([*above.split("\n")[: first - start], _comments_only(text)]), start

    def flag_decision(
        self,
        stmt: ast.stmt,
        targets: list[ast.expr],
        value: ast.expr,
        rest: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        after: tuple[int, int],
    ) -> None:
        """`flag = arch != 90`: where the flag is true, the rest of the block reads it. A flag a
        later test reads is judged there, with what that test guards."""
        flag = ast.unparse(targets[0]) if targets else "flag"
        if self._tested_later(flag, after):
            return
        if _ARCH_NAMED.search(flag.lower()):
            return  # `use_sm_100f = ...`: which build an arch takes, a predicate, not a path left out
        action = "reject" if _FLAG_DENIES.search(flag) else "positive"
        own = (stmt.lineno, stmt.end_lineno or stmt.lineno)
        # what the flag guards is read on the lines that read it, not on whatever follows it
        name = flag.rsplit(".", 1)[-1]
        first, last = after
        lines = self._own_lines()
        reads = [
            (n, n)
            for n in range(first, min(last, first + _GUARDED_LINES - 1, len(lines)) + 1)
            if name in lines[n - 1]
        ]
        if flag.startswith("self."):  # `self.allow_x = ...` in `__init__`: the methods that test it
            reads += self._elsewhere(flag, own)
        elif action == "positive" and (to := handedflags.handed(lines, flag, [n for n, _ in reads])):
            # `return _config(dstate, bw)`: what each arch gets is what that function does with it
            self._handed_flag_decision(stmt, value, flag, to, chain, scope)
            return
        on: ArmSpec = (value, stmt.lineno, rest, [own, *reads], action, f"sets {flag} = True")
        off: ArmSpec = (None, stmt.lineno, None, [], "nothing", f"leaves {flag} False")
        self.decision("flag", [on, off], chain, scope, stmt.lineno)

    def _handed_flag_decision(
        self,
        stmt: ast.stmt,
        value: ast.expr,
        flag: str,
        to: handedflags.Handed,
        chain: list[str],
        scope: Scope,
    ) -> None:
        """The flag's decision with the arms of the function it is handed to (judging.handedflags)."""
        own = (stmt.lineno, stmt.end_lineno or stmt.lineno)
        via = f"hands {flag} to {to.function}(), which "
        specs: list[ArmSpec] = []
        for test, stmts in ((value, to.on), (None, to.off)):
            action, what = outcomes.classify(stmts)
            span = [own, to.span(stmts)] if test is not None else [to.span(stmts)]
            specs.append((test, stmt.lineno, stmts, span, action, via + what))
        self.decision("flag", specs, chain, scope, stmt.lineno)

    def _elsewhere(self, name: str, own: tuple[int, int]) -> list[tuple[int, int]]:
        """`_consumers`, led by the _ELSEWHERE mark (what follows it is no part of the arm's block)."""
        found = self._consumers(name, own)
        return [_ELSEWHERE, *found] if found else []

    def _consumers(
        self, name: str, own: tuple[int, int], within: tuple[int, int] | None = None
    ) -> list[tuple[int, int]]:
        """The bodies of the `if` / `elif` branches elsewhere in the file (`within`: on those
        0-based lines) whose test reads `name` (`self.flag`, `helper(`) unnegated: where the path a
        flag or a predicate turns on is run; and the refusals of those that read it negated. Each
        at most _CONSUMER_LINES lines, at most _MAX_CONSUMERS of them."""
        lines = self._own_lines()
        out: list[tuple[int, int]] = []
        bare = name.rstrip("(")
        start, stop = within if within is not None else (0, len(lines))
        for i in range(start, min(stop, len(lines))):
            line = lines[i]
            if name not in line or own[0] <= i + 1 <= own[1]:
                continue
            head = line.lstrip()
            kept = _kept_in(lines, i) if own[1] > 0 else None
            if kept is not None and _asks_unnegated(line, bare):
                # `self.flint_decode = _flint_kernels(cfg)`, `supported = is_x_supported(...)`: the
                # branches that test what keeps it (a plain name in the lines of its function)
                near = None if kept[1].startswith("self.") else (i + 1, i + 1 + _KEPT_LINES)
                out += self._consumers(kept[1], (0, 0), near)[: _MAX_CONSUMERS - len(out)]
            if len(out) >= _MAX_CONSUMERS:
                break
            if not head.startswith(("if ", "elif ", "if(")):
                continue
            asks = _asks_unnegated(line, bare)
            indent = len(line) - len(head)
            first = i + 1  # 0-based index of the line after the test's own (a test may run on)
            while first < len(lines) and not lines[first - 1].rstrip().endswith(":") and first < i + 6:
                first += 1
            last = first
            while last < len(lines) and last < first + _CONSUMER_LINES:
                more = lines[last]
                if more.strip() and len(more) - len(more.lstrip()) <= indent:
                    break
                last += 1
            # `elif not self._has_x: failures.append("requires SM100a/SM103a")`: the refusal where
            # the answer is no says what the path requires
            refusal = not asks and first < len(lines) and _REFUSAL_LINE.match(lines[first]) is not None
            if last > first and (asks or refusal):
                out.append((first + 1, last if asks else min(last, first + _REFUSAL_LINES)))
            if asks and last > first and (after := self._refused_after(lines, i, last, bare)):
                out.append(after)
            if len(out) >= _MAX_CONSUMERS:
                break
        return out

    @staticmethod
    def _refused_after(lines: list[str], at: int, after: int, name: str) -> tuple[int, int] | None:
        """`if supported and backend == "x": return "x"` then `if backend == "x": raise E("x
        requires SM100 ...")`: the refusal the rest of the test reaches where `name` is no, as
        (first, last) 1-based lines of its message; None when the next statement is no such test."""
        test = lines[at].strip()
        if not test.endswith(":"):
            return None
        parts = [p.strip() for p in test.removeprefix("elif ").removeprefix("if ")[:-1].split(" and ")]
        rest = [p for p in parts if not _asks_unnegated(p, name)]
        end = after - 1  # the branch's last line (0-based), blank lines under it aside
        while end > at and not lines[end].strip():
            end -= 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        if not rest or len(rest) == len(parts) or after + 1 >= len(lines) or not _EXITS.match(lines[end]):
            return None
        indent = len(lines[at]) - len(lines[at].lstrip())
        nxt = lines[after]
        if len(nxt) - len(nxt.lstrip()) != indent or nxt.strip() != f"if {' and '.join(rest)}:":
            return None
        if _REFUSAL_LINE.match(lines[after + 1]) is None:
            return None
        return after + 2, min(after + 1 + _REFUSAL_LINES, len(lines))

    def _gate_test(self, test: ast.expr, scope: Scope | None = None) -> bool:
        """May this test read a capability? Hint words on its lines and a capability-like name in
        it, or a name the scope binds to such a read (`cap = torch.cuda.get_device_capability()`)."""
        if self._gate_hints.any_in(*self._span(test)) and capish_key(test, _GATEISH):
            return True
        if self._calls_own_helper(test):
            return True
        if scope is None:
            return False
        for node in walk(test):
            if isinstance(node, ast.Name):
                bound = scope.lookup(node.id)
                if (
                    isinstance(bound, _BOUND_VALUES)
                    and hasattr(bound, "lineno")  # (`a, b = x` binds a made-up `x[0]`)
                    and (bound.end_lineno or bound.lineno) - bound.lineno < _SHORT_LINES  # a short expression
                    and self._hinted(bound)
                    and capish_key(bound, _GATEISH)
                ):
                    return True
        return False

    def _calls_own_helper(self, test: ast.expr) -> bool:
        """Does the test call a module-level function of this file that reads a capability
        (`if _nvfp4_kv_on_fa2():`, whose body is `any(family(f) for f in (80, 90, 120))`)?"""
        if self._own_helpers[0] != len(self.facts.helpers):  # helpers are only ever appended
            names = {h.name for h in self.facts.helpers if h.kind == "def" and not h.method}
            self._own_helpers = (len(self.facts.helpers), names)
        own = self._own_helpers[1]
        if not own:
            return False
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in own for n in walk(test)
        )

    def _tested_later(self, flag: str, after: tuple[int, int]) -> bool:
        """Does a later `if` / `elif` / `while` / conditional expression in the block read the flag,
        or a later flag built from it (`use_fused = is_blackwell or hopper_fused`, judged whole there)?
        (On the file's lines, at most _GUARDED_LINES of them: a syntax walk per flag was quadratic.)"""
        first, last = after
        lines = self.lines[first - 1 : min(last, first + _GUARDED_LINES)]
        if flag not in "\n".join(lines):
            return False
        for i, line in enumerate(lines):
            if flag not in line or not _reads_unnegated(line, flag):
                continue
            opening = _opening_line(lines, i)
            if _BRANCHES.search(line) or _BRANCHES.match(opening):
                return True
            if _ANOTHER_FLAG.match(opening) and _combined(line, flag):
                return True
        return False

    def aliases(self, value: ast.Dict) -> None:
        """`{"is_sm90": "is_sm90_supported", ...}`: a platform object that answers attribute reads
        by calling the probe function each string names."""
        pairs = list(zip(value.keys, value.values, strict=False))
        if len(pairs) < 2:
            return
        found: dict[str, str] = {}
        for key, item in pairs:
            if not (isinstance(key, ast.Constant) and isinstance(item, ast.Constant)):
                return
            if not (isinstance(key.value, str) and isinstance(item.value, str) and item.value.isidentifier()):
                return
            found[key.value] = item.value
        self.facts.aliases.update(found)

    def exprs(
        self,
        node: ast.AST,
        stmt: ast.stmt,
        siblings: list[ast.stmt],
        index: int,
        scope: Scope,
        chain: list[str] | None = None,
    ) -> None:
        """Reads of tables with capability-looking keys, and conditional-expression gates (`chain`:
        the classes and functions they sit in)."""
        if not self._use_hints.any_in(*self._span(node)):
            return
        quoted: set[int] | None = None  # the conditional expressions that only word a message
        nested: set[int] | None = None  # those that are an outcome of another: judged with it
        later: set[int] | None = None  # nodes in a later operand of `and` / `or`: they may not run
        for sub in walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.value, (ast.Name, ast.Attribute)):
                if capish_key(sub.slice):
                    refusal = _refused_before(sub.slice, siblings[:index] if index >= 0 else [], sub.value)
                    # `if arch not in record["arches"]: raise ...` first: the read sees no missing key
                    access, what = ("guarded", f"{refusal} before the read") if refusal else ("subscript", "")
                    later = _later_operands(node) if later is None and not refusal else later
                    if not refusal and later is not None and id(sub) in later:
                        # `edge is None or n >= T[arch]`: read only where the operand before it lets it
                        access, what = "guarded", "KeyError on {arch} where the operand before lets it run"
                    what = what or "KeyError at run time on {arch}"
                    self.use(sub.value, sub.slice, access, sub.lineno, scope, what)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get":
                if sub.args and capish_key(sub.args[0]) and isinstance(sub.func.value, ast.Dict):
                    self.inline_table(sub, sub.func.value, scope, stmt, siblings, index)
                elif (
                    sub.args
                    and capish_key(sub.args[0])
                    and isinstance(sub.func.value, (ast.Name, ast.Attribute))
                ):
                    text, effect = self._missed_get(sub, stmt, siblings, index)
                    self.use(sub.func.value, sub.args[0], "get", sub.lineno, scope, text, effect=effect)
            elif (
                isinstance(sub, ast.Compare)
                and len(sub.ops) == 1
                and isinstance(sub.ops[0], (ast.In, ast.NotIn))
            ):
                table = sub.comparators[0]
                if isinstance(table, (ast.Name, ast.Attribute)) and capish_key(sub.left):
                    missing_runs_body = isinstance(sub.ops[0], ast.NotIn)  # `if cap not in T: raise`
                    text = "the membership test is False on {arch}" + self._after(
                        stmt, siblings, index, missing_runs_body
                    )
                    denies = (
                        isinstance(sub.ops[0], ast.In)
                        and isinstance(stmt, ast.If)
                        and stmt.test is sub
                        and refuses(stmt.body)
                    )
                    effect = tablereads.after_membership(stmt, sub)
                    self.use(table, sub.left, "in", sub.lineno, scope, text, denies, effect)
            elif isinstance(sub, ast.IfExp):
                quoted = _in_messages(node) if quoted is None else quoted
                if nested is None:
                    nested = _nested_ifexps(node, lambda test: self._gate_test(test, scope))
                if id(sub) not in quoted and id(sub) not in nested:
                    self.ifexp_decision(sub, scope, chain or [])

    def inline_table(
        self,
        call: ast.Call,
        value: ast.Dict,
        scope: Scope,
        stmt: ast.stmt,
        siblings: list[ast.stmt],
        index: int,
    ) -> None:
        """`{9: 32, 10: 16}.get(major, 0)`: a table written where it is read, named by its text."""
        classified = self._keys(value, scope)
        if classified is None:
            return
        style, keys = classified
        name = short(ast.unparse(value), 60)
        line = call.lineno
        self.facts.tables.append(TableDef(name, name, line, style, keys, True, self.src(line)))
        text, effect = self._missed_get(call, stmt, siblings, index)
        self.facts.uses.append(TableUse(name, line, "get", call.args[0], scope, text, effect=effect))

    def _keys(self, value: ast.Dict, scope: Scope) -> tuple[str, list[TableKey]] | None:
        """A dict literal's capability keys (their style, each with its value resolved), if it has them."""
        classified = classify_keys(value.keys, self.lines)
        if classified is None:
            return None
        style, keys = classified
        for key, node in zip(keys, value.values, strict=False):
            key.value = resolve_value(node, scope)
        return style, keys

    def _missed_get(
        self, call: ast.Call, stmt: ast.stmt, siblings: list[ast.stmt], index: int
    ) -> tuple[str, str]:
        """What `T.get(key[, default])` missing the key does: its default, then what follows; and
        its effect (judging.tablereads)."""
        default = ast.unparse(call.args[1]) if len(call.args) > 1 else "None"
        said = f".get() returns {short(default, 20)} on {{arch}}"
        value = stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(value, ast.IfExp) and call in (value.body, value.orelse):
            value = call  # `x = None if cap is None else T.get(cap)`
        chained = _chained_get(value, call)  # `T.get(cap, {}).get(world_size)`: the inner default's
        if value is call or chained is not None:
            following = siblings[index + 1 :] if index >= 0 else siblings
            if len(following) < 2 and self._defs:  # in an `else:` block: what the function does next
                last, known = stmt.end_lineno or stmt.lineno, {id(s) for s in following}
                after = (s for s in self._defs[-1].body if s.lineno > last and id(s) not in known)
                following = [*following, *after]
            outer = chained or call
            default = outer.args[1] if len(outer.args) > 1 else None
            effect = tablereads.after_get(stmt.targets[0], default, following)  # type: ignore[union-attr]
            if effect:
                return f"{said}: no limit applies (what the entry would bound is left as it is)", effect
            lines = self._own_lines()
            effect = tablereads.picks_only(lines, stmt.targets[0], stmt.end_lineno or stmt.lineno, len(lines))  # type: ignore[union-attr]
            if effect:
                return (
                    f"{said}: the value only picks a variant of a call (a keyword set by comparing with it)",
                    effect,
                )
        return said + self._after(stmt, siblings, index), ""

    def _after(self, stmt: ast.stmt, siblings: list[ast.stmt], index: int, body_runs: bool = False) -> str:
        """What the code does when the lookup comes up empty, as far as the code shows."""
        if isinstance(stmt, ast.If) and body_runs:
            what = summary(stmt.body)
            return f": the code {what}" if what else ": the check fails"
        if isinstance(stmt, ast.If):
            what = summary(stmt.orelse)
            return f": the check fails{'; falls back: ' + what if what else ''}"
        if isinstance(stmt, ast.Return):
            # `return T.get(cap)`: what the miss does is the caller's to decide (a tuned config
            # missing may mean autotuning, not a path off)
            return ": returned to the caller, which decides what a missing entry means"
        following = siblings[index + 1 :] if index >= 0 else siblings
        for nxt in following[:3]:
            if isinstance(nxt, ast.If) and re.search(r"is None|not |== 0|is not None", ast.unparse(nxt.test)):
                what = summary(nxt.body)
                return f": silently disabled{' (' + what + ')' if what else ''}"
        return ": silently disabled"

    def use(
        self,
        table: ast.expr,
        key: ast.expr,
        access: str,
        line: int,
        scope: Scope,
        consequence: str,
        denies: bool = False,
        effect: str = "",
    ) -> None:
        name = table.id if isinstance(table, ast.Name) else table.attr  # type: ignore[union-attr]
        self.facts.uses.append(TableUse(name, line, access, key, scope, consequence, denies, effect))

    def try_uses(self, stmt: ast.Try, scope: Scope) -> None:
        caught = [h for h in stmt.handlers if h.type is None or "KeyError" in ast.unparse(h.type)]
        if not caught:
            return
        what = summary(caught[0].body)
        for sub in walk(ast.Module(body=stmt.body, type_ignores=[])):
            if (
                isinstance(sub, ast.Subscript)
                and isinstance(sub.value, (ast.Name, ast.Attribute))
                and capish_key(sub.slice)
            ):
                text = f"KeyError is caught on {{arch}}: falls back{' (' + what + ')' if what else ''}"
                self.use(sub.value, sub.slice, "try", sub.lineno, scope, text)


def _later_operands(node: ast.AST) -> set[int]:
    """The nodes of every operand of `and` / `or` after the first (short-circuit may skip them)."""
    out: set[int] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.BoolOp):
            for value in sub.values[1:]:
                out.update(id(n) for n in ast.walk(value))
    return out


def _refused_before(key: ast.expr, before: list[ast.stmt], table: ast.expr) -> str:
    """What an earlier guard of the block does to a key it does not list (`if arch not in
    record["arches"]: raise NotImplementedError(...)`): the read below never sees that key. A
    guard on the table itself is its `in` check, read as such."""
    want, own = ast.dump(key), ast.dump(table)
    for stmt in before:
        test = stmt.test if isinstance(stmt, ast.If) else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn)):
            continue
        if ast.dump(test.comparators[0]) == own:
            continue
        if ast.dump(test.left) == want and stmt.body and isinstance(stmt.body[-1], (ast.Raise, ast.Return)):
            return summary(stmt.body)
    return ""


# An arch number in a name or string of an arm's code: `sm120`, `sm_120a`, `SM12x`.
_ARCH_NAMED = re.compile(r"(?<![a-z0-9])sm_?(\d{2}x|\d{2,3})(?=[a-z]?(?:$|[^a-z0-9]))")
# How a refusal names the archs it requires: `SM100/SM103`, `sm_90a`, `SM10x`, `SM>=80`,
# `compute capability 10.0`, a product or generation name.
_REQUIREMENT = re.compile(
    r"(?<![a-z0-9])sm_?(?:\d{2,3}[a-z]?|\d{2}x|\s*[<>]=?\s*\d{2,3})(?![0-9])"
    r"|compute capabilit(?:y|ies) (?:of )?\(?\d{1,2}[.,] ?\d|\bmajor versions? \d{1,2}\b"
    r"|\b(?:hopper|blackwell|ampere|ada lovelace|[gh]b?[12]00|gb?300|b[23]00)\b",
    re.I,
)


_JOINED = re.compile(r"""["']\s*\n\s*[rbfuRBFU]{0,2}["']""")


def _opening_line(lines: list[str], i: int) -> str:
    """The line that opened the bracket still open at line i (`if (\n  x.is_cuda\n  and flag\n):`),
    stripped; line i itself when none is open."""
    depth = 0
    for back in range(i - 1, max(i - 20, -1), -1):
        line = lines[back].split("#", 1)[0]
        depth += line.count(")") + line.count("]") - line.count("(") - line.count("[")
        if depth < 0:  # the bracket open at line i starts on this line
            return line.lstrip()
    return lines[i].lstrip()


def _combined(line: str, flag: str) -> bool:
    """Is the flag an operand of `and` / `or` on the line (not an argument passed on)?"""
    name = re.escape(flag)
    return re.search(rf"\b(?:and|or)\s+{name}\b|\b{name}\s+(?:and|or)\b", line) is not None


# `use_fused = (` / `self.use_x = `: a flag assigned from an expression (not `==`, not a keyword argument)
_ANOTHER_FLAG = re.compile(r"[A-Za-z_][\w.]*\s*(?::[^=]*)?=(?!=)")


_MAX_SUBJECTS = 8


def _setting_word(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 40


def _compared_strings(test: ast.expr) -> list[str]:
    """The strings a test asks a setting to be (`backend == "fa3"`, `"trtllm_mha" in (p, d)`,
    `kind in ("a", "b")`); not what it asks a setting not to be."""
    out: list[str] = []
    for node in walk(test):
        if not isinstance(node, ast.Compare) or not all(isinstance(op, (ast.Eq, ast.In)) for op in node.ops):
            continue
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            out += [
                item.value for item in items if isinstance(item, ast.Constant) and _setting_word(item.value)
            ]
    return out + _asked_members(test)


def _asked_members(test: ast.expr) -> list[str]:
    """The values a test asks a setting's object to be by its own method (`backend.is_cutedsl()`:
    "cutedsl"), not under a `not`."""
    negated = {id(n) for node in walk(test) if _negation(node) for n in walk(node.operand)}
    return [word for node in walk(test) if id(node) not in negated and (word := _member_asked(node))]


def _member_asked(node: ast.AST) -> str:
    """ "cutlass" for `backend.is_cutlass()` or `get_moe_runner_backend().is_cutlass()`: the value a
    setting's object is asked to be by its own method ("" otherwise). A call's result is a setting
    only from a getter of a backend: `get_platform().is_sm100()` asks the hardware."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return ""
    if node.args or node.keywords:
        return ""
    owner = node.func.value
    if not (
        isinstance(owner, ast.Name)
        or (isinstance(owner, ast.Call) and not owner.args and "backend" in call_name(owner.func).lower())
    ):
        return ""
    word = _MEMBER_ASKED.match(node.func.attr)
    return word[1] if word is not None and _setting_word(word[1]) else ""


def _required(test: ast.expr) -> list[tuple[str, ...]]:
    """The settings a test requires, each as the strings one of which the setting must be
    (`backend == "fa3"` -> [("fa3",)], `a == "x" or b in ("y", "z")` -> [("x", "y", "z")]; each
    operand of an `and` apart); none for what else it may hold on (`not`, a call, a mixed `or`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [group for value in test.values for group in _required(value)]
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    words: list[str] = []
    for part in parts:
        if member := _member_asked(part):  # `get_moe_runner_backend().is_cutlass()`
            words.append(member)
            continue
        if not isinstance(part, ast.Compare) or not all(isinstance(op, (ast.Eq, ast.In)) for op in part.ops):
            return []
        found = _compared_strings(part)
        if not found:
            return []
        words += found
    return [tuple(dict.fromkeys(words))] if words else []


# A function that rounds a size up to a multiple (`round_up`, `align`, `cdiv`, `pad_to`)
_ROUNDS = re.compile(r"round|align|pad|ceil|cdiv|multiple", re.I)


def _sizes(stmts: list[ast.stmt]) -> tuple[str, ...]:
    """The rounding functions an arm sizes with, when all it does (through nested ifs) is assign
    what they give (`n = round_up(n, 256)`): a per-arch padding; () otherwise."""
    found: list[str] = []
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            inner = [*_sizes(stmt.body), *(_sizes(stmt.orelse) if stmt.orelse else ())]
            if not inner or not _sizes(stmt.body) or (stmt.orelse and not _sizes(stmt.orelse)):
                return ()
            found += inner
        elif (
            isinstance(stmt, ast.Assign)
            and all(isinstance(t, (ast.Name, ast.Attribute)) for t in stmt.targets)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name)
            and _ROUNDS.search(stmt.value.func.id)
        ):
            found.append(stmt.value.func.id)
        elif not (isinstance(stmt, ast.Assign) and _arithmetic(stmt.value)):
            return ()  # (`pad = padded - size` beside them is part of the sizing)
    return tuple(dict.fromkeys(found))


def _arithmetic(node: ast.expr) -> bool:
    """Is the expression only arithmetic of names, attributes and numbers?"""
    if isinstance(node, ast.BinOp):
        return _arithmetic(node.left) and _arithmetic(node.right)
    return isinstance(node, (ast.Name, ast.Attribute)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, int)
    )


# `get_fallback_backend`, `get_default_attn_backend`, `_default_runner`: a function that answers a default
_RESOLVER_CALL = re.compile(r"(?:^|_)(?:default|fallback)(?:_|$)", re.I)


def _resolved_before(lines: list[str], line: int) -> str:
    """`name=function` when the statement above line `line` (read in the file's own lines: the cut
    may have dropped it) gives a variable a default resolver's answer (`fallback =
    get_fallback_backend()`), "" otherwise."""
    k = line - 2
    while k >= 0 and (not lines[k].strip() or lines[k].lstrip().startswith("#")):
        k -= 1
    hit = _ASSIGNED_CALL.match(lines[k]) if k >= 0 else None
    if hit is None or not _RESOLVER_CALL.search(hit[2].rsplit(".", 1)[-1]):
        return ""
    return f"{hit[1]}={hit[2].rsplit('.', 1)[-1]}"


# `fallback_backend = get_fallback_backend()`: one name given one call's answer, on one line
_ASSIGNED_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_][\w.]*)\([^()]*\)\s*(?:#.*)?$")


def _negation(node: ast.AST) -> TypeGuard[ast.UnaryOp]:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)


_MEMBER_ASKED = re.compile(r"^is_([a-z][a-z0-9_]*)$")


# `if not pred(x):` / `if not pred(x) or y:` on a line of its own; then `return False, "..."`,
# `return (False, REASON)`, `raise ValueError(REASON)`: a refusal in words or by a constant's name
_NEGATED_TEST = re.compile(r"^\s*(?:el)?if not \w+\(")
_SAYS_NO = re.compile(
    r"^\s*(?:return\s+\(?\s*(?:False|None)\s*,\s*|raise\s+\w+\(\s*)"
    r"(?:(?P<name>[A-Z_][A-Z0-9_]*)\s*\)?\s*$|f?[\"'])"
)


def _arm_notes(words: tuple[str, int]) -> tuple[str, ...]:
    """The sentences naming archs in an arm's comments (`_Walker._arm_words`)."""
    return tuple(prose.arch_sentences(words[0])[: prose.MAX_SENTENCES])


def _arm_comments(words: tuple[str, int]) -> tuple[list[tuple[str, ...]], list[str]]:
    """What an arm's comments (`_Walker._arm_words`) state a path needs, with the words."""
    if not remarks.may_state(words[0].lower()):
        return [], []
    return remarks.stated(*words)


def _named_sentences(stmts: list[ast.stmt] | None, scope: Scope) -> str:
    """The strings the names an arm's last statement gives bind (`return False, _REASON` where the
    module sets `_REASON = "requires an SM100 ... device"`), one quoted per line; "" for none."""
    if not stmts or not isinstance(stmts[-1], ast.Return | ast.Raise):
        return ""
    found = []
    for node in walk(stmts[-1]):
        bound = scope.lookup(node.id) if isinstance(node, ast.Name) else None
        if isinstance(bound, ast.Constant) and isinstance(bound.value, str) and " " in bound.value:
            found.append("\n" + repr(bound.value))
    return "".join(found)


def _requirement(code: str) -> str:
    """The words of a refusal that name the archs it requires, with what precedes them in the
    sentence ("requires SM100/SM103"); "" when it names none ("Unsupported compute capability")."""
    hit = _REQUIREMENT.search(code)
    if hit is None:
        return ""
    code = _JOINED.sub("", code)  # "... or Blackwell " f"SM100/SM103": one message, one sentence
    hit = _REQUIREMENT.search(code)
    if hit is None:
        return ""
    start = max(code.rfind(c, 0, hit.start()) for c in "\"'(\n") + 1
    # to the end of the sentence: every arch it names counts ("SM90 or Blackwell SM100/SM103")
    ends = [i for i in (code.find(c, hit.end()) for c in "\"'\n;") if i >= 0]
    stop = re.search(r"\.(?:\s|$)", code[hit.end() :])
    if stop is not None:
        ends.append(hit.end() + stop.start())
    end = min([*ends, hit.end() + 120])
    return code[start:end].strip().rstrip(".")[:160]


_MESSAGE_CALL = re.compile(r"(?:^|\.)(?:\w*(?:Error|Exception|Warning)|warn\w*|info\w*|debug|error|print)$")


_BARE_NAME = re.compile(r"[\w.\-]*")


def _prose(node: ast.IfExp) -> bool:
    """Are all the values a conditional expression chooses between words for people (not a bare
    name such as a backend's `cute-dsl`: a space, an `=` or a `/` in each)?"""
    values: list[ast.expr] = []
    while isinstance(node, ast.IfExp):
        values.append(node.body)
        node = node.orelse  # type: ignore[assignment]
    values.append(node)
    return all(
        isinstance(v, ast.Constant) and isinstance(v.value, str) and _BARE_NAME.fullmatch(v.value) is None
        for v in values
    )


def _nested_ifexps(node: ast.AST, gate: Callable[[ast.expr], bool]) -> set[int]:
    """The ids of the conditional expressions that are an outcome of another recorded as a decision
    (`A if cc > 100 else (B if cc == 100 else C)`): read alone, the inner one would drop the outer
    test (12.0 "gives C"), which the outer decision's chain already holds. An `else` chain is one
    decision with its head; one in a branch's value (`(A if is_sm100 else B) if fast else C`) is
    left to be read alone unless the head's chain tests the arch (`gate`)."""
    out: set[int] = set()
    for sub in walk(node):
        if not isinstance(sub, ast.IfExp) or id(sub) in out:
            continue
        chain, tests = [sub], [sub.test]
        while isinstance(chain[-1].orelse, ast.IfExp):
            chain.append(chain[-1].orelse)
            tests.append(chain[-1].test)
            out.add(id(chain[-1]))
        if any(gate(t) for t in tests):
            out.update(id(c.body) for c in chain if isinstance(c.body, ast.IfExp))
    return out


def _in_messages(node: ast.AST) -> set[int]:
    """The ids of the conditional expressions inside an exception's, a log line's or an
    f-string's words (`f"... {'sm120' if is_sm120 else 'sm90'} kernel"`): they pick no path."""
    out: set[int] = set()
    for sub in walk(node):
        if isinstance(sub, ast.Call) and _MESSAGE_CALL.search(call_name(sub.func) or ""):
            parts: list[ast.AST] = [*sub.args, *(k.value for k in sub.keywords)]
        elif isinstance(sub, ast.JoinedStr):
            parts = [sub]
        else:
            continue
        out.update(id(n) for part in parts for n in walk(part) if isinstance(n, ast.IfExp))
    return out


def _comments_only(text: str) -> str:
    """The comments of a run of lines, each on its own line (code blanked, line numbers kept)."""
    return "\n".join(hit[0] if (hit := _COMMENT.search(ln)) else "" for ln in text.split("\n"))


def _boolean(value: ast.expr | None) -> bool:
    """`return a and b`, `return x == 9`, `return not y`, `return bool(...)`: an answer, not a value."""
    if isinstance(value, ast.Call) and call_name(value.func) == "bool" and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, (ast.BoolOp, ast.Compare, ast.UnaryOp))


def _chain(stmt: ast.If) -> tuple[list[tuple[ast.expr, list[ast.stmt], int]], list[ast.stmt]]:
    """An if/elif chain's (test, body) links and its final else."""
    links = [(stmt.test, stmt.body, stmt.lineno)]
    while len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If):
        stmt = stmt.orelse[0]
        links.append((stmt.test, stmt.body, stmt.lineno))
    return links, stmt.orelse


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
