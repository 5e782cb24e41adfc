"""What the code an arm runs reaches in other modules, and what those modules need.

A gate's arm often says nothing about what it needs by itself: `return True` in
`_supports_current_device`, `_warmup_router_gemm(model)`, `fmha_plan(...)`. The kernels it runs
live in the modules it calls into. Extraction records, per arm, the modules its names come from
(the file's imports, imports inside the arm, and one level of the file's own functions it calls);
judging reads what those modules evidently need (their imports of tcgen05, their docstrings,
their paths, the sources they compile) or that their kernels were read and need nothing.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capgap.arch import all_facts, parse_arch
from capgap.judging import builds, evidence, remarks
from capgap.judging.extensions import Extensions
from capgap.judging.records import FileFacts
from capgap.reading.hintlines import line_matches

_IDENT = re.compile(r"[A-Za-z_]\w*")
# `from .x import (a, b as c)` (the parenthesised list may run over lines) / `import a.b as c`
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)", re.M
)
_MAX_MODULES = 16
_MAX_QUEUE = 2 * _MAX_MODULES  # the modules reached, with those they name by string or re-export
_OWN_DEPTH = 2  # the file's own functions followed this many calls deep
_MAX_OWN_BODIES = 24
_MAX_DEF_LINES = 200  # of a function the arm calls, what is read for the modules it reaches


def relative_package(module: str, is_package: bool, dots: int) -> list[str] | None:
    """The package a relative import with `dots` leading dots names from `module` (`from ..x
    import y` in `a.b.c`: ["a"]); None when it climbs above the top (Python refuses it)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    up = dots - 1
    return None if up > len(package) else package[: len(package) - up]


def import_statements(
    text: str, module: str, is_package: bool
) -> Iterator[tuple[int, str | None, list[list[str]]]]:
    """Each import statement of `text` (at any depth), `from` ones first: where it starts in the
    text, the module a `from` names (relative ones resolved; None for a plain `import`), and the
    words of each name it imports (`["c"]`, `["a.b", "as", "x"]`). A relative import climbing
    above the top package is left out (Python refuses it)."""
    if "import" not in text:
        return
    for hit in line_matches(_FROM, text, "import"):
        dots, base = hit[1], hit[2]
        if dots:
            parts = relative_package(module, is_package, len(dots))
            if parts is None:
                continue
            base = ".".join([*parts, base] if base else parts)
        names = re.sub(r"#[^\n]*", "", hit[3]).strip("()")
        yield hit.start(), base, [words for part in names.split(",") if (words := part.split())]
    for hit in line_matches(_IMPORT, text, "import"):
        yield hit.start(), None, [words for part in hit[1].split(",") if (words := part.split())]


def import_map(text: str, module: str, is_package: bool) -> dict[str, str]:
    """Each name the file's imports bind (at any depth: engines import lazily, inside functions)
    -> the dotted name it stands for (`from a.b import c` -> `a.b.c`: a module or a name in `a.b`)."""
    out: dict[str, str] = {}
    for _start, base, names in import_statements(text, module, is_package):
        for words in names:
            if base is None:  # `import a.b as x` binds x; `import a.b` binds a
                if len(words) == 3 and words[1] == "as":
                    out.setdefault(words[2], words[0])
                else:
                    out.setdefault(words[0].split(".")[0], words[0].split(".")[0])
            elif words[0] != "*":
                local = words[2] if len(words) == 3 and words[1] == "as" else words[0]
                out.setdefault(local, f"{base}.{words[0]}" if base else words[0])
    return out


_DEF_HEAD = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)


def _def_lines(text: str) -> dict[str, int]:
    """Each name `def name(` defines in `text` -> the 0-based line of its first definition (one
    pass over the text, not one per name asked). A head counts only where the line spells
    `def name` with one space, as the lookups it replaces asked."""
    out: dict[str, int] = {}
    line, pos = 0, 0
    for hit in line_matches(_DEF_HEAD, text, "def "):
        line += text.count("\n", pos, hit.start())
        pos = hit.start()
        name = hit[2]
        if name not in out:
            end = text.find("\n", pos)
            if f"def {name}" in text[pos : len(text) if end == -1 else end]:
                out[name] = line
    return out


def top_def(lines: list[str], name: str) -> int | None:
    """The 0-based line of the one module-level `def name(` of the file (None: none, or several)."""
    heads = [i for i, line in enumerate(lines) if line.startswith((f"def {name}(", f"async def {name}("))]
    return heads[0] if len(heads) == 1 else None


def def_text(lines: list[str], i: int) -> str:
    """The text of the `def` on line `i` (0-based), up to _MAX_DEF_LINES lines."""
    line = lines[i]
    indent = len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs())
    out = [line]
    for more in lines[i + 1 : i + _MAX_DEF_LINES]:
        stripped = more.strip()
        dedented = stripped and len(more) - len(more.lstrip()) <= indent
        if dedented and not stripped.startswith(("#", ")", "]", "}")):
            break
        out.append(more)
    return "\n".join(out)


# Libraries whose calls run no arch-specific kernel of the engine's: the standard library, torch's
# front end, numpy. They would fill the list of what an arm reaches before its kernels do.
_PLAIN = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "typing_extensions"}
# A name that asks (`is_sm100a_supported`, `has_tcgen05`) says which arch it checks, not what runs.
_ASKS = re.compile(r"_*(?:is|has|can|supports?|use|check|require)_|.*_(?:supported|available)$", re.I)


def _entry_needs(entry: str) -> list[tuple[str, ...]]:
    """What the library call a module's entry records (`'deep_gemm.bf16_mega_gate' (line 35)`) needs."""
    return evidence.needs_in(entry.partition("'")[2].rpartition("'")[0].lower()) if entry else []


def _plain_library(dotted: str) -> bool:
    return dotted.partition(".")[0] in _PLAIN


# `self.shared._enable_nvfp4_swiglu_fusion = True`: a private attribute an arm turns on
_SETS_TRUE = re.compile(r"\.(_\w+)[ \t]*=[ \t]*True\b")
_MAX_FLAG_BLOCKS = 4
_HEAD_LINES = 6  # a multi-line `if (` test: its head is looked for this far above the read


def lines_holding_name(lines: list[str], name: str) -> list[int]:
    """The 0-based lines that read `name` (not those that set it)."""
    read = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)(?![ \t]*=[^=])")
    return [i for i, line in enumerate(lines) if name in line and read.search(line)]


def _if_block(lines: list[str], i: int) -> str:
    """The body of the `if` whose test reads a flag on line i, up to _MAX_DEF_LINES lines ("" when the
    read is in no `if` test)."""
    for head in range(i, max(-1, i - _HEAD_LINES), -1):
        stripped = lines[head].lstrip()
        if stripped.startswith(("if ", "if(", "elif ")):
            break
        if head < i and stripped.endswith(":"):
            return ""
    else:
        return ""
    indent = len(lines[head]) - len(lines[head].lstrip())
    end = i
    while end < len(lines) and not lines[end].rstrip().endswith(":"):
        end += 1
    body: list[str] = []
    for more in lines[end + 1 : end + 1 + _MAX_DEF_LINES]:
        stripped = more.strip()
        if stripped and len(more) - len(more.lstrip()) <= indent and not stripped.startswith("#"):
            break
        body.append(more)
    return "\n".join(body)


_MAX_ATTRIBUTES = 4  # the functions of one imported module a piece of code names


def _used_from(name: str, local: dict[str, str], code: str) -> list[str]:
    """For a package `code` imports whole (`import flashinfer`), the functions it names through it
    (`flashinfer.prefill.trtllm_ragged_attention_deepseek`), as `from x import y` would name them."""
    dotted = local.get(name)
    if dotted is None or dotted != name or _plain_library(dotted) or f"{name}." not in code:
        return []
    uses = re.findall(rf"(?<![\w.]){re.escape(name)}((?:\.[A-Za-z_]\w*)+)", code)
    return list(dict.fromkeys(f"{dotted}{rest}" for rest in uses))[:_MAX_ATTRIBUTES]


class Reacher:
    """One file's answer to "which other modules does this arm's code reach?", for all its arms:
    the file's defs found once, and what each of its own functions reaches read once, however
    many arms call it."""

    def __init__(
        self, imports: dict[str, str], lines: list[str], text: str, module: str, is_package: bool
    ) -> None:
        self.imports = imports
        self.lines = lines
        self.text = text  # `lines` joined
        self.module = module
        self.is_package = is_package
        self._defs: dict[str, int] | None = None
        # own function -> the modules its body names, the names it leaves unbound, and the functions
        # it names through a package imported whole
        self._through: dict[str, tuple[list[str], list[str], list[str]]] = {}

    def _via(self, name: str) -> tuple[list[str], list[str], list[str]] | None:
        """The dotted names the body of the file's own function `name` binds by import, in the
        order its names come, the names it leaves unbound (the file's own it may call) and the
        functions it names through a package imported whole; None when the file defines no `name`."""
        if self._defs is None:
            self._defs = _def_lines(self.text)
        at = self._defs.get(name)
        if at is None:
            return None
        got = self._through.get(name)
        if got is None:
            body = def_text(self.lines, at)
            local = {**self.imports, **import_map(body, self.module, self.is_package)}
            names = list(dict.fromkeys(_IDENT.findall(body)))
            used = [t for t in (local.get(n) for n in names) if t]
            named = [t for n in names for t in _used_from(n, local, body)]
            got = (used, [n for n in names if n not in local], named)
            self._through[name] = got
        return got

    def subject(self, function: str) -> tuple[str, ...]:
        """The imports a predicate's name says it asks about (`mega_gate_supported`, importing
        `bf16_mega_gate`): its yes leads to them, though its own code only answers."""
        words = subject_words(function)
        if not words:
            return ()
        found = [dotted for local, dotted in self.imports.items() if _named_by(words, local, dotted)]
        return tuple(d for d in found if not _plain_library(d))[:_MAX_MODULES]

    def flag_reads(self, code: str) -> str:
        """The code the file runs under the attributes `code` turns on (`x._enable_fusion = True`):
        each `if` elsewhere in the file that reads one (`if getattr(self, "_enable_fusion", False)`),
        its block (the kernel the flag enables is imported and called there)."""
        if "= True" not in code:
            return ""
        names = set(_SETS_TRUE.findall(code))
        out: list[str] = []
        for name in sorted(names):
            for i in lines_holding_name(self.lines, name):
                block = _if_block(self.lines, i)
                if block and block not in out:
                    out.append(block)
                if len(out) >= _MAX_FLAG_BLOCKS:
                    return "\n".join(out)
        return "\n".join(out)

    def direct(self, code: str) -> tuple[str, ...]:
        """The modules the arm's own `code` imports or names through an import (not those the
        file's functions it calls reach): what it surely loads where it is taken."""
        idents, inner, local = self._names(code)
        found = [local.get(name) for name in idents]
        found += [t for name in idents for t in _used_from(name, local, code)]  # `vllm._deepselect_C`
        return tuple(dict.fromkeys(t for t in found if t and t != self.module))

    def _names(self, code: str) -> tuple[list[str], dict[str, str], dict[str, str]]:
        """The names `code` uses, in order; the imports it makes itself; and what every name it
        may use is bound to by an import (its own over the file's)."""
        inner = import_map(code, self.module, self.is_package) if "import" in code else {}
        return list(dict.fromkeys(_IDENT.findall(code))), inner, {**self.imports, **inner}

    def reached(self, code: str, own: str = "") -> tuple[str, ...]:
        """The dotted names of other modules that the arm's `code` reaches: names it uses that an
        import binds, what it imports itself, and the same for the file's own functions it calls
        (two calls deep: a runner factory calling the runner that imports the kernel; not `own`,
        the function the decision sits in)."""
        found: list[str] = []

        def add(targets: Iterable[str | None]) -> None:
            for target in targets:
                if target and target != self.module and target not in found and not _plain_library(target):
                    found.append(target)

        idents, inner, local = self._names(code)
        add(local.get(name) for name in idents)
        later = [t for name in idents for t in _used_from(name, local, code)]
        seen = {own}
        level = [n for n in idents if n not in inner]
        for _ in range(_OWN_DEPTH):
            deeper: list[str] = []
            for name in level:
                if len(found) >= _MAX_MODULES or len(seen) > _MAX_OWN_BODIES:
                    break
                if name in seen or name in self.imports:
                    continue
                via = self._via(name)
                if via is not None:  # one of the file's own functions
                    seen.add(name)
                    add(via[0])
                    deeper += via[1]
                    later += via[2]
            level = deeper
        # last, the functions the code names through a package imported whole (`import flashinfer`
        # then `flashinfer.prefill.trtllm_ragged_attention_deepseek(...)`)
        add(later)
        return tuple(found[:_MAX_MODULES])


# The words that make a function a predicate (`mega_gate_supported`, `_can_use_mega_mhc`); the rest
# of its name is what it asks about.
_PREDICATE_WORDS = frozenset(
    {
        "is",
        "can",
        "use",
        "should",
        "enable",
        "enabled",
        "supported",
        "support",
        "supports",
        "available",
        "has",
    }
)
_MIN_SUBJECT_WORDS = 2  # `_device_supported`: one word names no kernel
_NOT_NAMED = frozenset({"default", "get", "select", "pick", "choose"})
_ARCH_WORD = re.compile(r"sm\d+[a-z]?|sm\d+x|hopper|blackwell")


def subject_words(function: str) -> frozenset[str]:
    """What a predicate's name says it asks about (`_can_use_mega_mhc` -> mega, mhc); empty when
    the name is no predicate's or says too little."""
    words = [w for w in function.lower().split("_") if w]
    if not _PREDICATE_WORDS.intersection(words):
        return frozenset()
    # `_tinygemm2_sm100_enabled`: an arch number in a name says which arch, not which kernel
    subject = frozenset(w for w in words if not _ARCH_WORD.fullmatch(w)) - _PREDICATE_WORDS
    return subject if len(subject) >= _MIN_SUBJECT_WORDS else frozenset()


def name_words(function: str) -> frozenset[str]:
    """What a function's name names (`flashinfer_kda_prefill_default` -> flashinfer, kda, prefill):
    its words less those of asking, defaults and arch numbers."""
    words = (w for w in function.lower().split("_") if w)
    return frozenset(w for w in words if not _ARCH_WORD.fullmatch(w)) - _PREDICATE_WORDS - _NOT_NAMED


def _named_by(subject: frozenset[str], local: str, dotted: str) -> bool:
    """Does an import (`mhc_mega_boundary` from `...layernorm.mhc_mega`) carry every word of the subject?"""
    return subject <= set(local.lower().split("_")) or subject <= set(
        dotted.rpartition(".")[0].rpartition(".")[2].split("_")
    )


def reached(
    code: str,
    imports: dict[str, str],
    lines: list[str],
    text: str,
    module: str,
    is_package: bool,
    own: str = "",
) -> tuple[str, ...]:
    """`Reacher(...).reached(code, own)` for one arm (`text`: `lines` joined)."""
    return Reacher(imports, lines, text, module, is_package).reached(code, own)


class Callees:
    """The scanned modules by dotted name, to read what an arm's callees need."""

    def __init__(
        self,
        files: Iterable[FileFacts],
        every: bool = False,
        extensions: Extensions | None = None,
        outside: Callable[[str], FileFacts | None] | None = None,
    ) -> None:
        """`every`: modules kept only for what they register or spell (judging.named) too;
        `extensions`: the tree's compiled modules, for what one a path imports is built for;
        `outside`: the modules of the releases the target pins (`flashinfer.gemm`), by name."""
        self.by_module = {f.module: f for f in files if every or not f.named_only}
        self.extensions = extensions or Extensions()
        self.outside = outside
        self._tops = frozenset(m.partition(".")[0] for m in self.by_module)
        self._packages: dict[str, list[FileFacts]] | None = None  # package -> its modules, built once

    def in_package(self, package: str) -> list[FileFacts]:
        """The scanned modules directly in `package` (not in its subpackages)."""
        if self._packages is None:
            self._packages = {}
            for name, f in self.by_module.items():
                self._packages.setdefault(name.rpartition(".")[0], []).append(f)
        return self._packages.get(package, [])

    def module(self, name: str) -> FileFacts | None:
        """The scanned module `name`, else that module of a release the target pins."""
        found = self.by_module.get(name)
        if found is None and self.outside is not None and name.partition(".")[0] not in self._tops:
            found = self.outside(name)
        return found

    def resolve(self, dotted: str) -> FileFacts | None:
        """`a.b.c` is module `a.b.c`, or the name `c` in module `a.b`; never a package further up
        (`a` for `a.b.c`: what a package's `__init__` states is no fact of a module under it the
        scan kept none of)."""
        parts = dotted.split(".")
        for end in range(len(parts), max(1, len(parts) - 2), -1):
            f = self.module(".".join(parts[:end]))
            if f is not None:
                return f
        return None

    def _exporter(self, f: FileFacts | None, dotted: str, name: str) -> FileFacts | None:
        """The package of a pinned release that re-exports `name` (`flashinfer.gemm` for
        `flashinfer.gemm.mm_fp4`; the top package itself for `flashinfer.x`), or None."""
        head, _, tail = dotted.partition(".")
        if not name or head in self._tops:
            return None
        if f is None and tail == name:
            f = self.module(head)
        if f is None or not f.path.endswith("__init__.py") or not f.imports.get(name):
            return None
        return f

    def needs(
        self, modules: Iterable[str], loaded: Iterable[str] = ()
    ) -> tuple[list[tuple[str, ...]], list[str], str]:
        """What the modules reached need, each with where it was read, and the kernels read in
        those that need nothing ("" when none was read). `loaded`: those the arm's own code imports
        (Arm.uses), where a compiled module's images say what it needs (one reached only through a
        function, perhaps down another of its branches, says nothing of the arm)."""
        loaded = frozenset(loaded)
        needs: list[tuple[str, ...]] = []
        where: list[str] = []
        kernels = ""
        queue = list(modules)
        for dotted in queue:  # (grows by the modules a function reached names by string)
            f = self.resolve(dotted)
            name = dotted.rpartition(".")[2] if f is None or f.module != dotted else ""
            outside = f is not None and f.module.partition(".")[0] not in self._tops
            package = self._exporter(f, dotted, name)
            if package is not None:
                # `flashinfer.gemm.mm_fp4`: a pinned release's package re-exports it from the module
                # that has it, read next; what the name as written says is read now, as unread
                if len(queue) < _MAX_QUEUE and package.imports[name] not in queue:
                    queue.append(package.imports[name])
                f, outside = None, False
            for more in f.named_modules.get(name, ()) if f is not None and name else ():
                # `has_x()` handing "flashinfer.cute_dsl.blockscaled_gemm" to importlib: what loads
                if len(queue) < _MAX_QUEUE and more not in queue:
                    queue.append(more)
            compiled = self.extensions.needs(dotted) if f is None and dotted in loaded else None
            if compiled is not None:
                # `import vllm._deepselect_C`: kernels only GPUs with the features can load
                if compiled[0] not in needs:
                    needs.append(compiled[0])
                    where.append(f"{compiled[1]}, which it imports")
                continue
            if f is None:
                # a module the scan kept no facts of still says by its path what it is written
                # for (`third_party.fmha_sm100.api`); a predicate's name is no module of it
                # (`utils.is_sm100_supported` asks which GPU it is, it runs nothing)
                module = dotted.rpartition(".")[0] if _ASKS.match(name) else dotted
                f = FileFacts(module.replace(".", "/") + ".py", module)
                remarks.add_path_needs(f)
            for need, seen in zip(f.needs, f.needs_from, strict=True):
                if need not in needs:
                    needs.append(need)
                    where.append(f"{seen} in {f.module}, which it calls")
            declared = _declared_need(f, name) if name and outside else None
            declared = declared or (_built_need(f) if outside else None)
            for need in declared[0] if declared is not None else ():
                # `@supported_compute_capability([100, 103, 107])` on the release's own function:
                # what every GPU it lets run the function has (tcgen05) is what the function needs
                if need not in needs:
                    needs.append(need)
                    where.append(declared[1])
            for need in _entry_needs(f.entries.get(name, "")) if name else ():
                # `bf16_mega_gate`, whose body calls `deep_gemm.bf16_mega_gate(...)`
                if need not in needs:
                    needs.append(need)
                    where.append(f"{f.entries[name]} in {f.module}.{name}, which it calls")
            for need, seen in _required_targets(f, name) if name and _ASKS.match(name) else ():
                # `return is_cute_dsl_available() and is_sm100a_supported(dev)`: a predicate of the
                # path that requires code built for an arch-specific target (sm_100a: tcgen05)
                if need not in needs:
                    needs.append(need)
                    where.append(f"{seen}, which {f.module}.{name} requires")
            if name and not _ASKS.match(name):
                # a kernel entry named for what it runs (`gen_trtllm_gen_gemm_module`, `gemm_sm100`)
                for need, seen in zip(*evidence.needs_with_evidence(name.lower()), strict=True):
                    if need not in needs:
                        needs.append(need)
                        source = dotted.rpartition(".")[0]
                        where.append(f"{seen} in the name {name}, which it uses from {source}")
            if not f.needs and f.path.endswith(".py") and not (outside and f.path.endswith("__init__.py")):
                # a module that only drives kernels of its package (`tuner.py` importing
                # `blackwell/moe_kernel.py`): what the modules it imports from there need (not a
                # pinned release's package, which imports all its kernels, whatever one a path runs)
                for sibling in f.siblings[:_MAX_MODULES]:
                    g = self.module(sibling)
                    for need, seen in zip(g.needs, g.needs_from, strict=True) if g is not None else ():
                        if need not in needs:
                            needs.append(need)
                            where.append(f"{seen} in {g.module}, which {f.module} imports")
            if f.kernels and not f.needs and not f.entries.get(name) and not kernels:
                kernels = f"{f.kernels} in {f.module}, which it calls"
        return needs, where, kernels


def _built_need(f: FileFacts) -> tuple[list[tuple[str, ...]], str] | None:
    """The needs a module's JIT build lists declare (`supported_major_versions=[10]`): the MMA
    generation every GPU they build for has, with the list's words; None when a list builds for a
    GPU with neither, or the module has none."""
    lists = [b for b in f.builds if b.function]
    archs = [
        a for b in lists for a in all_facts().values() if builds.coverage(b.archs, parse_arch(a.cc)) == "sass"
    ]
    if not lists or not archs:
        return None
    need = _generation(archs)
    written = ", ".join(dict.fromkeys(a for b in lists for a in b.archs))
    built = f"{f.module}.{lists[0].function}() built for {written} only"
    return (need, f"{built}, the pinned release's own build list") if need else None


def _generation(archs: list[Any]) -> list[tuple[str, ...]]:
    """The MMA generation every arch of `archs` has (tcgen05; wgmma; either), [] if none; where
    they are all of the SM100 family, also its build, which a tcgen05 GPU of another family (a
    Jetson Thor) lacks: the release builds or admits no code for it."""
    for need in (("tcgen05",), ("wgmma",), ("wgmma", "tcgen05")):
        if all(any(a.has(feature) for feature in need) for a in archs):
            return [need, ("sm100_build",)] if all(a.has("sm100_build") for a in archs) else [need]
    return []


def _declared_need(f: FileFacts, name: str) -> tuple[list[tuple[str, ...]], str] | None:
    """The needs a capability decorator of function `name` declares: the MMA generation every arch
    it admits has (`[100, 103, 107]`: tcgen05; `[90, 100]`: wgmma or tcgen05), with its words;
    None when it admits an arch with neither, or none is found."""
    for d in f.decisions:
        if d.kind != "decorator" or d.context.rpartition(".")[2] != name or d.arms[0].test is None:
            continue
        test = d.arms[0].test
        listed = test.comparators[0] if isinstance(test, ast.Compare) and test.comparators else None
        try:
            values = [ast.literal_eval(e) for e in getattr(listed, "elts", [])]
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None
        archs = [a for a in all_facts().values() if a.number in values or (a.major, a.minor) in values]
        need = _generation(archs) if archs else []
        checked = f"{d.source.strip()} on {f.module}.{name}"
        return (need, f"{checked}, the pinned release's own check") if need else None
    return None


# A predicate asking for an arch-specific target (`is_sm100a_supported`, `_is_sm90a`): the code it
# lets run is built for that target's features
_TARGET_CALL = re.compile(r"(?<![\w.])(\w*sm_?\d{2,3}a\w*)[ \t]*\(")


def _required_targets(f: FileFacts, name: str) -> list[tuple[tuple[str, ...], str]]:
    """What the predicate `name` of module `f` requires by asking for an arch-specific target in
    its own code, each with the call (`is_sm100a_supported()`: tcgen05)."""
    helper = next((h for h in f.helpers if h.name == name and h.kind == "def"), None)
    out: list[tuple[tuple[str, ...], str]] = []
    for called in _TARGET_CALL.findall("\n".join(helper.source) if helper is not None else ""):
        if called == name or not _ASKS.match(called):  # (its own `def` line names it too)
            continue
        for need in evidence.needs_in(called.lower()):
            if need not in (n for n, _ in out):
                out.append((need, f"{called}()"))
    return out
