"""What a setting's value runs, where a registry maps the name to code: a backend picked by string.

Engines pick backends by name (`overrides["attention_backend"] = "trtllm_mla"` on SM100) and map
each name to the code it runs in a registry, apart from the decision:

    @register_attention_backend("trtllm_mla")
    def create_trtllm_mla_backend(runner):
        from sglang.srt.layers.attention.trtllm_mla_backend import TRTLLMMLABackend
        return TRTLLMMLABackend(runner)

The module the registered function imports to run (the one named like the registered name, when
one is) says what the backend needs: `trtllm_gen` in `trtllm_mla_backend.py` is TRT-LLM-gen's
tcgen05 kernels. A module that names the target's own arch (`is_sm120`, "XQA on SM90 and SM120")
has a path for it, and says nothing of a need.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from capgap.arch import ArchFacts, all_facts
from capgap.judging import callees, evidence
from capgap.judging.statements import walk
from capgap.reading.hintlines import holds_any, lines_with_any

if TYPE_CHECKING:
    from capgap.judging.records import Decision, FileFacts
    from capgap.judging.registry import Registry

# A value that may name an implementation: `trtllm_mla`, `flashinfer_cutedsl`, `fa4`
_VALUE = re.compile(r"[A-Za-z][\w\-.]{1,47}")
_MAX_VALUES = 12


# id -> (the statement, kept alive; its values; the names it assigns an attribute from; its settings)
Memo = dict[int, tuple[ast.stmt, tuple[str, ...], frozenset[str], tuple[str, ...]]]


def values(stmts: list[ast.stmt], memo: Memo | None = None) -> tuple[str, ...]:
    """The strings the statements give settings: assigned, returned, dict values, keyword
    arguments (`declare_resolution(..., backend="trtllm_mha")`); not what they log or ask.
    `memo`: each statement's, found once: a flag's arm is the rest of its block, so a block of
    flags would walk the same statements once per flag."""
    out: dict[str, None] = {}
    for stmt in stmts:
        out.update(dict.fromkeys(_read(stmt, memo)[1]))
        if len(out) >= _MAX_VALUES:  # the first _MAX_VALUES distinct ones are all that is kept
            break
    return tuple(out)[:_MAX_VALUES]


def assigned_from(stmts: list[ast.stmt], memo: Memo | None = None) -> set[str]:
    """The names the statements assign an attribute from (`self.attention_backend = default_backend`)."""
    out: set[str] = set()
    for stmt in stmts:
        out |= _read(stmt, memo)[2]
    return out


def _read(
    stmt: ast.stmt, memo: Memo | None
) -> tuple[ast.stmt, tuple[str, ...], frozenset[str], tuple[str, ...]]:
    seen = memo.get(id(stmt)) if memo is not None else None
    if seen is None or seen[0] is not stmt:
        seen = (stmt, *_stmt_values(stmt))
        if memo is not None:
            memo[id(stmt)] = seen
    return seen


def _stmt_values(stmt: ast.stmt) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]:
    """`values([stmt])`, `assigned_from([stmt])` and `settings([stmt])` in one walk: the first
    _MAX_VALUES distinct strings (and settings), in ast.walk's order (those after them can never be
    among the first _MAX_VALUES of a list of statements either)."""
    out: list[str] = []
    names: set[str] = set()
    given_to: list[str] = []
    for node in walk(stmt):  # ast.walk's order
        given: list[ast.expr | None]
        pairs: list[tuple[str, ast.expr | None]]
        if isinstance(node, ast.Assign):
            given = [node.value]
            pairs = [(_setting_name(t), node.value) for t in node.targets]
            if isinstance(node.value, ast.Name) and any(isinstance(t, ast.Attribute) for t in node.targets):
                names.add(node.value.id)
        elif isinstance(node, (ast.AnnAssign, ast.Return)):
            given, pairs = [node.value], []
        elif isinstance(node, ast.Dict):
            given = list(node.values)
            pairs = [
                (k.value, v)
                for k, v in zip(node.keys, node.values, strict=False)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
        elif isinstance(node, ast.keyword):
            given = [node.value]
            pairs = [(node.arg, node.value)] if node.arg else []
        else:
            continue
        out += [s for v in given if v is not None for s in _strings(v)]
        given_to += [f"{name}={s}" for name, v in pairs if name and v is not None for s in _strings(v)]
    first = tuple(dict.fromkeys(out))[:_MAX_VALUES]
    return first, frozenset(names), tuple(dict.fromkeys(given_to))[:_MAX_VALUES]


def kept(lines: list[str], at: int, branches: list[list[ast.stmt]]) -> tuple[str, ...]:
    """The strings that the settings the branches give a string held before them (`fmha_backend =
    "auto"` above `if is_sm100: fmha_backend = "cutlass"`): what skipping every branch keeps.
    `lines`: the file's; `at`: the `if`'s 1-based line. Read in the text (a file may be parsed in
    cuts that start at the `if`): the last assignment of the block above it, when no statement
    between (nested ones too) assigns the name."""
    if not 0 < at <= len(lines):
        return ()
    head = lines[at - 1]
    indent = len(head) - len(head.lstrip())
    out: list[str] = []
    for name in sorted({name for stmts in branches for name in _given_names(stmts)}):
        sets = re.compile(rf"^[ \t]*{re.escape(name)}[ \t]*(?::[^=]*)?[+\-*/|&]?=(?!=)")
        for line in reversed(lines[max(0, at - 1 - _KEPT_LINES) : at - 1]):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            depth = len(line) - len(line.lstrip())
            if depth < indent:
                break  # the block's start: nothing above it in the block
            if not sets.match(line):
                continue
            hit = _KEPT.match(stripped) if depth == indent else None
            if hit is not None and hit[1] == name:
                out.append(hit[3])
            break  # the nearest assignment decides (one nested or computed: unknown)
    return tuple(dict.fromkeys(out))[:_MAX_VALUES]


_KEPT_LINES = 60
_KEPT = re.compile(r"""^([\w.]+)[ \t]*=[ \t]*(["'])([A-Za-z][\w\-.]{1,47})\2[ \t]*(?:#.*)?$""")


def _target(node: ast.expr) -> str:
    """`x` / `self.x` as written; "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def _given_names(stmts: list[ast.stmt], strings: bool = True) -> set[str]:
    """The names (`x`, `self.x`) the statements assign (`strings`: only where a string is assigned)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, ast.Assign) and (not strings or _strings(node.value)):
                out.update(filter(None, (_target(t) for t in node.targets)))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and not strings:
                out.add(_target(node.target))
    out.discard("")
    return out


def settings(stmts: list[ast.stmt], memo: Memo | None = None) -> tuple[str, ...]:
    """Each setting the statements give a string, as `name=value`: a subscript or attribute
    assigned (`overrides["fp8_gemm_runner_backend"] = "flashinfer_cutedsl"`, `cfg.mode = "x"`), a dict
    entry, a keyword argument (`declare_resolution(..., mode="decode")`). What a check of the value
    is about is read against the name. `memo`: as for `values`."""
    out: dict[str, None] = {}
    for stmt in stmts:
        out.update(dict.fromkeys(_read(stmt, memo)[3]))
        if len(out) >= _MAX_VALUES:
            break
    return tuple(out)[:_MAX_VALUES]


def _setting_name(target: ast.expr) -> str:
    """`overrides["x"]` -> x, `cfg.x` -> x, `x` -> x ("" for anything else)."""
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        key = target.slice.value
        return key if isinstance(key, str) else ""
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _strings(node: ast.expr) -> list[str]:
    """The string constants an expression evaluates to (`"a"`, `("a", "sm100")`, `"a" if c else "b"`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if _VALUE.fullmatch(node.value) else []
    if isinstance(node, (ast.Tuple, ast.List)):
        return [s for e in node.elts for s in _strings(e)]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


# `@register_attention_backend("trtllm_mla")`: a decorator registering the function under one name
_REGISTER = re.compile(r"@[\w.]*register\w*\(\s*([\"'])([\w\-.]+)\1\s*\)\s*(?:#.*)?$", re.I)
_REGISTERS = re.compile(rb"@[\w.]*register\w*\(\s*[\"']")
_REGISTERS_TEXT = re.compile(r"@[\w.]*register\w*\(\s*[\"']", re.I)  # what each _REGISTER match holds
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")


def may_register(low: bytes) -> bool:
    """Does the file's lowercased bytes hold a decorator registering under a name?"""
    return b"register" in low and _REGISTERS.search(low) is not None


_CLASS_NAME = re.compile(r"[A-Z]\w*[a-z]\w*$")
_MAX_MODULES = 8


def registrations(
    text: str, module: str, is_package: bool
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """Each name a decorator of the file registers a function under -> the modules the function
    imports in its body (the backend it builds: lazy imports), else the classes of other modules
    it uses; and each name -> the function itself (the factory the name builds: what it refuses,
    it refuses for every path that picks the name)."""
    out: dict[str, tuple[str, ...]] = {}
    functions: dict[str, str] = {}
    if "register" not in text or _REGISTERS_TEXT.search(text) is None:  # (`register_buffer(`: no)
        return out, functions
    lines = text.splitlines()
    imports: dict[str, str] | None = None
    for name, at, function in _registered(lines):
        functions.setdefault(name, function)
        body = callees.def_text(lines, at)
        own = callees.import_map(body, module, is_package)
        used = list(dict.fromkeys(callees._IDENT.findall(body)))
        reached = [own[n] for n in used if n in own]
        if not reached:
            imports = imports if imports is not None else callees.import_map(text, module, is_package)
            reached = [imports[n] for n in used if n in imports and _CLASS_NAME.match(n)]
        if reached:
            out.setdefault(name, tuple(dict.fromkeys(reached))[:_MAX_MODULES])
    return out, functions


def _registered(lines: list[str]) -> Iterator[tuple[str, int, str]]:
    """Each name a decorator registers a function under, the 0-based line of its `def` and its name."""
    for i, line in enumerate(lines):
        hit = _REGISTER.search(line) if "register" in line and line.lstrip().startswith("@") else None
        if hit is None:
            continue
        for j in range(i + 1, min(len(lines), i + 8)):
            if defined := _DEF.match(lines[j]):
                yield hit[2], j, defined[1]
                break


# An arch a module's code names: `sm120`, `is_sm120`, `SM_100`, `SM12x` (lowercased text)
_ARCH_WORD = re.compile(r"sm(?<![a-z0-9]sm)[_ ]?(?:(\d{2,3})[af]?(?![0-9x])|(\d{1,2})x\b)")
# predicate names say which arch they ask about, not what the code runs (`is_sm100`, `has_tma`)
_PREDICATE = evidence.PREDICATE_NAMES


# The needs read from a module's words: a tensor-core MMA generation or NVLS multicast (words for
# FP8, FP4 or TMA are everywhere in a backend's code, and say nothing of its kernels)
_KINDS = {("wgmma",), ("tcgen05",), ("wgmma", "tcgen05"), ("nvls_multicast",)}
_LITERALS = tuple(
    {lit.encode() for feats, spellings in evidence.NEEDS if feats in _KINDS for lit, _ in spellings}
)


def may_spell(low: bytes) -> bool:
    """Can `spelled` find a need in the text of the file's lowercased bytes? ASCII bytes are that
    text (fileparse decodes UTF-8 first): one C pass for every word a match must hold. Other bytes
    may decode by a declared codec: any literal of a spelling (a plain `in` rules most out)."""
    if low.isascii():
        return holds_any(low, _ANY_TOKENS)
    return any(lit in low for lit in _LITERALS)


# The entries of evidence.NEEDS `spelled` reads, in their order: only these are searched for
_KIND_NEEDS = tuple((feats, spellings) for feats, spellings in evidence.NEEDS if feats in _KINDS)
# Each of their literals -> the shorter ones inside it: where one of those is absent, so is it
_INSIDE = {
    lit: tuple({other: None for _, o in _KIND_NEEDS for other, _ in o if other != lit and other in lit})
    for _, spellings in _KIND_NEEDS
    for lit, _ in spellings
}


def _tokens(spelling: evidence.Spelling) -> tuple[str, ...]:
    """Words one of which each match of the spelling holds: `deep_?gemm` -> deepgemm, deep_gemm;
    its literal where its regex is more than optional underscores (`fa3(?<=\\bfa3)\\b` -> fa3)."""
    literal, pattern = spelling
    if pattern is None or not re.fullmatch(r"[a-z0-9]+(?:_\?[a-z0-9]+|_[a-z0-9]+)*", pattern.pattern):
        return (literal,)
    out = [""]
    for part in re.split(r"(_\??)", pattern.pattern):
        tails = ("", "_") if part == "_?" else (part,)
        out = [w + tail for w in out for tail in tails]
    return tuple(out)


# Every match of every spelling `spelled` reads holds one of these: one C pass over a module's
# bytes (hintlines.holds_any) rules out three modules in four, where each literal would cost a
# pass of its own (`sm` of `sm_?90a` is in nearly every module: its two spellings stand for it)
_ANY_TOKENS = tuple({w: None for _, spellings in _KIND_NEEDS for s in spellings for w in _tokens(s)})
# Where a predicate name starts (the rest of _PREDICATE, whose matches are whole words)
_PREDICATE_HEAD = re.compile(r"_?(?:is|has|supports?)_\w")
_WORD_RUN = re.compile(r"\w+")
_SPELLED_WORD = re.compile(r"[a-z0-9_]+")


def spelled(low: str, raw: bytes | None = None) -> tuple[list[tuple[str, ...]], list[str], tuple[str, ...]]:
    """What a module's lowercased code spells anywhere that a kernel family needs (predicate names
    aside), with the word and its line, and the archs it names ("12.0"; "12" for `sm12x`).
    `raw`: `low` encoded as UTF-8 ('replace'), where the caller has it."""
    archs: list[str] = []
    for sm, family in _ARCH_WORD.findall(low) if "sm" in low else ():
        name = f"{int(sm) // 10}.{int(sm) % 10}" if sm else family
        if name not in archs:
            archs.append(name)
    # One C pass names the lines holding any token (ASCII words are in the str where they are in its
    # UTF-8 bytes; a lone surrogate becomes '?'): no match is elsewhere, and none spans a line break.
    raw = low.encode("utf-8", "replace") if raw is None else raw
    hit = lines_with_any(raw, _ANY_TOKENS)
    if hit is None or any(brk in raw for brk in _OTHER_BREAKS):  # its lines would not be split("\n")'s
        needs, where = _first_spellings(low, None)
    elif hit:
        lines = low.split("\n", hit[-1] + 1)  # (the lines after the last one hit stay whole)
        needs, where = _first_spellings("\n".join([lines[i] for i in hit]), [i + 1 for i in hit])
    else:
        needs, where = [], []
    return needs, where, tuple(archs)


_OTHER_BREAKS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")  # lines_with_any's but "\n"


def _first_spellings(text: str, line_of: list[int] | None) -> tuple[list[tuple[str, ...]], list[str]]:
    """evidence.needs_with_evidence(_PREDICATE.sub("", text), 1, limit=None) for the needs of
    _KINDS. `line_of`: the file line of each of `text`'s lines, where it joins some of the file's
    (None: it is the whole file)."""
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    first: dict[str, int] = {}  # literal -> its first offset, -1 when absent: each text searched once
    for feats, spellings in _KIND_NEEDS:
        for spelling in spellings:
            lit = spelling[0]
            if lit not in first:
                absent = any(first.get(inner) == -1 for inner in _INSIDE[lit])
                first[lit] = -1 if absent else text.find(lit)
            start = _outside_predicates(text, spelling, first[lit])
            if start < 0:
                continue
            needs.append(feats)
            word = _SPELLED_WORD.match(text, start)
            index = text.count("\n", 0, start)
            line = index + 1 if line_of is None else line_of[index]
            where.append(f"'{word[0] if word else spelling[0]}' (line {line})")
            break
    return needs, where


def _outside_predicates(low: str, spelling: evidence.Spelling, at: int) -> int:
    """Where `spelling` first occurs in `low` outside every predicate name: its first occurrence in
    `_PREDICATE.sub("", low)`, mapped back, without rewriting a whole module's text. A predicate
    match is a whole word (led by `\\b`, ended by greedy `\\w+`) and every spelling is word
    characters led by its literal, so cutting the word neither makes nor breaks a match elsewhere.
    `at`: the literal's first offset in `low` (-1: absent)."""
    literal, pattern = spelling
    while at != -1:
        if pattern is not None:
            hit = pattern.search(low, at)  # its matches start with the literal: none before `at`
            if hit is None:
                return -1
            at = hit.start()
        end = _predicate_end(low, at)
        if end < 0:
            return at
        at = low.find(literal, end)
    return -1


def _predicate_end(low: str, at: int) -> int:
    """The end of the predicate name (`is_sm100_supported`) the word holding `at` is; -1 if none."""
    start = at
    while start > 0 and (low[start - 1].isalnum() or low[start - 1] == "_"):  # re's \w, as str says
        start -= 1
    if _PREDICATE_HEAD.match(low, start) is None:
        return -1
    return _WORD_RUN.match(low, start).end()  # type: ignore[union-attr]  # `start` holds a word char


class Named:
    """The scan's registrations by name, to read what a backend picked by string runs."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._by_name: dict[str, list[tuple[str, ...]]] | None = None
        self._factories: dict[str, list[tuple[FileFacts, str]]] | None = None
        self._modules: callees.Callees | None = None

    def _index(self) -> dict[str, list[tuple[str, ...]]]:
        if self._by_name is None:
            self._by_name = {}
            for f in self._reg.files:
                for name, modules in f.registered.items():
                    self._by_name.setdefault(name, []).append(modules)
        return self._by_name

    def need(
        self, names: list[str], target: ArchFacts, owners: list[str]
    ) -> tuple[tuple[str, ...], str] | None:
        """A need the target lacks and an owner has, read from the modules the names are registered
        to run, when every registered one of them runs such a module; else None."""
        found: tuple[tuple[str, ...], str] | None = None
        for name in names:
            registered = self._index().get(name)
            if not registered:
                continue  # not a registered name (`"sm100"`, `"decode"`): says nothing
            got = self._lacking(name, registered, target, owners)
            if got is None:
                return None
            found = found or got
        return found

    def _lacking(
        self, name: str, registered: list[tuple[str, ...]], target: ArchFacts, owners: list[str]
    ) -> tuple[tuple[str, ...], str] | None:
        """What each module the name runs needs (those named like it, when any is: `trtllm_mla`
        -> `trtllm_mla_backend`), when every one of them needs something the target lacks."""
        if self._modules is None:
            self._modules = callees.Callees(self._reg.files, every=True)
        modules = [
            f for dotted in {m for ms in registered for m in ms} if (f := self._modules.resolve(dotted))
        ]
        key = name.replace("_", "").replace("-", "").lower()
        own = [f for f in modules if key in f.module.rsplit(".", 1)[-1].replace("_", "").lower()]
        found: tuple[tuple[str, ...], str] | None = None
        for f in sorted(own or modules, key=lambda f: f.module):
            got = _module_need(f, target, owners)
            if got is None:
                return None
            found = found or (got[0], f"{got[1]} in {f.module}, the code registered as '{name}'")
        return found

    def refusal(self, name: str, target: ArchFacts) -> tuple[FileFacts, Decision, str] | None:
        """The refusal the function registered as `name` makes on the target: a decision of it
        whose every outcome the target can reach fails (`create_flashattention_v3_backend`'s
        `assert (major == 8 and ...) or major == 9`); None when it makes none."""
        for f, d, mine in self._factory_checks(name, target):
            if mine and all(d.arms[i].action == "error" for i in mine):
                return f, d, d.arms[mine[0]].summary
        return None

    def accepts(self, name: str, target: ArchFacts) -> tuple[FileFacts, Decision] | None:
        """The arch check of the function registered as `name` that may let the target through
        where it fails other archs (sglang's fa3 `assert (major == 8 and not mla) or major == 9` on
        an 8.9: the engine's own word that its kernels run there); None when it has no such check."""
        checks = list(self._factory_checks(name, target))
        if any(mine and all(d.arms[i].action == "error" for i in mine) for _, d, mine in checks):
            return None  # a refusal (`refusal`): it turns the target away
        return next(((f, d) for f, d, mine in checks if any(d.arms[i].action != "error" for i in mine)), None)

    def _factory_checks(
        self, name: str, target: ArchFacts
    ) -> Iterator[tuple[FileFacts, Decision, tuple[int, ...]]]:
        """The decisions of the functions registered as `name` that fail some arch, with the arms
        the target reaches."""
        from capgap.judging.reach import reached

        if self._factories is None:
            self._factories = {}
            for f in self._reg.files:
                for registered, function in f.factories.items():
                    self._factories.setdefault(registered, []).append((f, function))
        for f, function in self._factories.get(name, ()):
            for d in f.decisions:
                if d.context.rsplit(".", 1)[-1] != function:
                    continue
                r = reached(d, self._reg.context(d.scope, f))
                if r is None or not any(
                    arms and all(d.arms[i].action == "error" for i in arms) for arms in r.reach.values()
                ):
                    continue
                yield f, d, r.reach.get(target.cc, ())

    def asked(
        self, modules: tuple[str, ...], target: ArchFacts, owners: list[str]
    ) -> tuple[tuple[str, ...], str] | None:
        """A need the target lacks and an owner has, spelled by a module whose constants a test reads
        (its limits: `tp_size in SUPPORTED_TP_SIZES`); None when none has one."""
        if self._modules is None:
            self._modules = callees.Callees(self._reg.files, every=True)
        for dotted in modules:
            f = self._modules.by_module.get(dotted)
            got = _module_need(f, target, owners) if f is not None else None
            if got is not None:
                return got[0], f"{got[1]} in {f.module}, whose limits the test reads"
        return None


def _module_need(f: FileFacts, target: ArchFacts, owners: list[str]) -> tuple[tuple[str, ...], str] | None:
    """The first need the module spells that the target lacks and an owner has; None when it names
    the target's own arch or family (it has a path for it) or spells no such need."""
    if any(a == str(target.major) or a in _family(target) for a in f.names_archs):
        return None
    facts = all_facts()
    for need, seen in zip(f.spelled, f.spelled_from, strict=True):
        if evidence.lacking([need], target) and evidence.had_by(need, (facts[cc] for cc in owners)):
            return need, seen
    return None


def _family(target: ArchFacts) -> set[str]:
    return {cc for cc, a in all_facts().items() if a.major == target.major}
