"""One file's bytes -> `FileFacts` (or the reason it was skipped). Runs in worker processes.

Never imports or runs the file. Bad files (binary, non-UTF-8, Python 2, syntax errors, huge)
come back with `skipped` set.
"""

from __future__ import annotations

import ast
import codecs
import re
import warnings

from capgap.judging import builds
from capgap.judging import named as by_name
from capgap.judging.extract import extract, kernel_facts, spelled_facts
from capgap.judging.gpupredicates import of_the_gpu_alone
from capgap.judging.records import FileFacts
from capgap.judging.statements import CAPISH
from capgap.reading import chunks, prefilter
from capgap.reading.hintlines import holds_any
from capgap.reading.tokens import KERNEL_TOKENS, PROPERTY_TOKENS

MAX_BYTES = 4 * 1024 * 1024  # larger .py files are generated tables, not engine logic
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_PY2 = re.compile(
    r"^\s*(print\s+[\"'\w]|exec\s+[\"']|except\s+\w+\s*,\s*\w+\s*:)|\bur[\"']|0[0-7]+L?\b|\d+L\b", re.M
)


def module_name(rel: str) -> str:
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def facts_for_bytes(rel: str, data: bytes, is_python: bool, size: int | None = None) -> FileFacts | None:
    """Facts of one file, None when nothing in it can matter. `size`: the file's size on disk
    when `data` is only its first MAX_BYTES + 1 bytes (the readers read no more)."""
    facts = FileFacts(rel, module_name(rel))
    size = len(data) if size is None else size
    if is_python and (wide := _wide_encoding(data)):
        facts.skipped = f"{wide} text, not Python source (Python reads no {wide} files)"
        return facts
    if is_python and b"\0" in data:
        facts.skipped = "binary data, not Python source"
        return facts
    relevant_py, relevant_build = relevance(data, is_python)
    relevant_py = relevant_py or (is_python and _asks_properties(data))
    jit_majors = is_python and b"supported_major_versions" in data  # a JIT flag builder's arch list
    relevant_build = relevant_build or jit_majors
    if not (relevant_build or relevant_py):
        return _kernel_module(facts, data) if is_python else None
    if max(size, len(data)) > MAX_BYTES:
        facts.skipped = f"too large to be hand-written source ({size // (1024 * 1024)} MB); not parsed"
        return facts
    text, encoding = _decode_with(data)
    if text is None:
        facts.skipped = encoding or "not valid UTF-8 (and no coding declaration that decodes it)"
        return facts
    if relevant_build:
        facts.builds = builds.find_build_lists(text, python_module=is_python and not rel.endswith("setup.py"))
    if jit_majors:
        facts.builds = [*facts.builds, *builds.jit_major_lists(text)]
    if relevant_py:
        tree, source, ends, source_bytes = _parse_cut(data, encoding, rel)
        was_cut = tree is not None
        if tree is None:  # the cut guessed a boundary wrong, or the file is bad: parse it whole
            source, ends = text, {}
            source_bytes = data if encoding == "utf-8-sig" else None
            try:
                tree = _parse(source, rel, strict=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                facts.skipped = _syntax_reason(source, exc)
                return facts
        assert tree is not None
        whole = _Whole(text, ends, data if encoding == "utf-8-sig" else None)
        try:
            extracted = extract(tree, source.splitlines(), rel, facts.module, whole, data=source_bytes)
            quiet = _dropped_callers(extracted, data, source) if was_cut else frozenset()
            gates = _cut_gates(extracted, data, ends) if was_cut else ()
            if quiet or gates:
                # its own capability helpers named for what they mean (`_use_sheared_bias()`): the
                # cut kept their definitions but dropped the calls, where their decisions are; or
                # a gate on a flag whose name says nothing, whose arms the cut shortened
                recut = _parse_cut(data, encoding, rel, quiet, gates)
                if recut[0] is not None:
                    tree, source, ends, source_bytes = recut
                    whole = _Whole(text, ends, data if encoding == "utf-8-sig" else None)
                    lines = source.splitlines()
                    extracted = extract(tree, lines, rel, facts.module, whole, data=source_bytes)
        except RecursionError:  # a pathologically nested file: skipped with its reason, the scan goes on
            facts.skipped = "nested too deeply to read"
            return facts
        extracted.builds = facts.builds
        if jit_majors and not extracted.sources:  # what the module compiles says if its list is expected
            from capgap.judging.extract import _native_sources

            _native_sources(extracted, text)
        facts = extracted
    useful = facts.builds or facts.tables or facts.uses or facts.helpers or facts.decisions or facts.aliases
    useful = useful or facts.registered  # a registry of backends by name (judging.named)
    useful = useful or facts.kernel_specs  # kernels registered per op with their archs
    useful = useful or facts.class_bounds or facts.bound_checks  # operators' capability bounds
    # a module of constants another module's tests read (`SUPPORTED_CUDA_ARCHS = ((9, 0), ...)`)
    useful = useful or any(CAPISH.search(name) for name in facts.module_scope.names)
    # a wrapper whose functions call a kernel library (`deep_gemm.mega_mhc(...)`): what its callers run
    useful = useful or bool(facts.entries)
    # a kernel module parsed for its hint words, with no decision of its own (`fused_wo_a.py`
    # importing tcgen05): what it needs is what its callers' paths run, as for one never parsed
    useful = useful or (is_python and bool(facts.needs or facts.kernels))
    return facts if useful else None


def _kernel_module(facts: FileFacts, data: bytes) -> FileFacts | None:
    """A module that tests no capability but imports an arch-specific instruction set or defines
    kernels: what it needs (or that its kernels need nothing) is what its callers' paths run."""
    low = data.lower()
    if len(data) > MAX_BYTES:
        return None
    if not holds_any(low, _KERNEL_WORDS):  # one C pass for them all
        if holds_any(data, _SOURCE_QUOTES):  # a JIT module: what it compiles is what its callers run
            return _jit_module(facts, data) or _backend_module(facts, data, low)
        return _backend_module(facts, data, low)
    text, _ = _decode_with(data)
    if text is None:
        return None
    kernel_facts(facts, text, low)
    return facts if facts.needs or facts.kernels or facts.entries or facts.spelled else None


# A `.cu` / `.cuh` file name in a string (`cuda_files=["deepseek_v4/wo_a_fused.cuh"]`; not `torch.cuda`)
_SOURCE_QUOTES = ('.cu"', ".cu'", '.cuh"', ".cuh'")


def _jit_module(facts: FileFacts, data: bytes) -> FileFacts | None:
    """A module that tests no capability but names the native sources it compiles: its callers'
    paths run them (reading.native gives it what they need)."""
    from capgap.judging.extract import _native_sources

    text, _ = _decode_with(data)
    if text is None:
        return None
    _native_sources(facts, text)
    return facts if facts.sources else None


def _backend_module(facts: FileFacts, data: bytes, low: bytes) -> FileFacts | None:
    """A module that tests no capability and has no kernels, but registers backends by name or
    spells a kernel family (`trtllm_gen`): what a backend picked by name runs (judging.named)."""
    registers = by_name.may_register(low)
    if not registers and not by_name.may_spell(low):
        return None
    text, _ = _decode_with(data)
    if text is None:
        return None
    if registers:
        facts.registered, factories = by_name.registrations(
            text, facts.module, facts.path.endswith("__init__.py")
        )
        facts.factories = factories if facts.registered else {}
    spelled_facts(facts, text.lower())
    if not facts.spelled and not facts.registered:
        return None
    facts.named_only = True
    return facts


def _parse_cut(
    data: bytes, encoding: str, rel: str, also: frozenset[bytes] = frozenset(), gates: tuple[int, ...] = ()
) -> tuple[ast.Module | None, str, dict[int, int], bytes | None]:
    """The statement cut parsed: (tree or None when it does not parse, its text, where statements
    kept in part end, the bytes the text decodes from for the C search of hint lines, which refuses
    anything but ASCII). A file too odd to cut at all gives no tree: it is parsed whole instead.
    `also`: names whose calls the cut keeps, `gates`: offsets of tests it keeps whole (chunks.select)."""
    try:
        selected = chunks.select(data, also, gates)
    except (AttributeError, ValueError, RecursionError):  # e.g. decorators with no def or class
        return None, "", {}, None
    cut = selected.text.decode(encoding)  # whole lines of a file that decodes: it decodes too
    return _parse(cut, rel), cut, selected.ends, selected.text if encoding == "utf-8-sig" else None


def _dropped_callers(facts: FileFacts, data: bytes, cut: str) -> frozenset[bytes]:
    """The module's own plain capability predicates whose names hold no hint word and whose calls
    the cut dropped (more calls of the name in the file than in the cut). A predicate of the GPU
    alone is judged where it is called, never where it is defined; one that asks more
    (`is_cuda() and family(100) and has_deep_gemm()`) is judged at its definition already."""
    out = set()
    for h in facts.helpers:
        word = h.name.encode()
        if h.kind != "def" or h.method or h.params or word not in data:
            continue
        dropped = data.count(word + b"(") > cut.count(h.name + "(")
        if dropped and not prefilter.hit_offsets(word, names=True) and of_the_gpu_alone(h):
            out.add(word)
    return frozenset(out)


_GATE_STARTS = ("if ", "elif ", "while ")


def _cut_gates(facts: FileFacts, data: bytes, ends: dict[int, int]) -> tuple[int, ...]:
    """Offsets of the tests of the decisions the cut kept in part: an `if` on a flag whose name
    holds no hint word (`if can_use_custom_nvls_collectives:`, built from `is_hopper_or_newer`)
    loses what it guards to the cut, while a gate whose own test names the capability is kept
    whole, body and all (chunks). The same gate kept whole is the same answer."""
    lines = sorted({d.line for d in facts.decisions if d.line in ends})
    if not lines:
        return ()
    out: list[int] = []
    line, pos = 1, 0
    for want in lines:
        while line < want:
            nl = data.find(b"\n", pos)
            if nl == -1:
                return tuple(out)
            line, pos = line + 1, nl + 1
        eol = data.find(b"\n", pos)
        text = data[pos : len(data) if eol == -1 else eol]
        at = pos + len(text) - len(text.lstrip())
        if data.startswith(tuple(s.encode() for s in _GATE_STARTS), at):
            out.append(at)
    return tuple(out)


_KERNEL_WORDS = tuple(tok.decode() for tok in KERNEL_TOKENS)
_MAJOR_READ = re.compile(rb"\.major\b|[\"']major[\"']")  # `props.major`, `getattr(props, "major")`


def _asks_properties(data: bytes) -> bool:
    """Does the module read the GPU's properties and their `major` (`props.major >= 9`,
    `getattr(props, 'major', None)`; not "row-major"): a capability test no token names?"""
    return any(tok in data for tok in PROPERTY_TOKENS) and _MAJOR_READ.search(data) is not None


def relevance(data: bytes, is_python: bool) -> tuple[bool, bool]:
    """Is the file worth parsing as Python, and worth reading for build lists?"""
    if chunks._cutscan is not None:  # both answers of the reference below in one C pass
        worth, has_build_token = chunks._cutscan.relevance(data)
        relevant_py = is_python and worth
        return relevant_py, (relevant_py or not is_python) and has_build_token
    relevant_py = is_python and prefilter.worth_parsing(data)
    # build strings in Python files mention `gencode` / `arch_list`: only parse-worthy files have them
    relevant_build = (relevant_py or not is_python) and any(tok in data for tok in builds.BUILD_TOKENS)
    return relevant_py, relevant_build


class _Whole:
    """The file's own lines (split only when a gate reads what it guards), and where each
    statement the cut kept in part ends."""

    # What str.splitlines splits at besides "\n": a text with none of them joins back as it was.
    _BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

    def __init__(self, text: str, ends: dict[int, int], raw: bytes | None = None) -> None:
        self.ends = ends
        self._text = text
        self._raw = raw  # the UTF-8 bytes `text` decodes from, if at hand
        self._lines: list[str] | None = None
        self._newlines_only: bool | None = None

    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self._text.splitlines()
        return self._lines

    def _plain(self) -> bool:
        """Are newlines the text's only line breaks?"""
        if self._newlines_only is None:
            self._newlines_only = not any(brk in self._text for brk in self._BREAKS)
        return self._newlines_only

    def joined(self) -> str:
        """`"\n".join(self.lines())`, without splitting a text that has only newlines in it (the
        join drops one last newline)."""
        if not self._plain():
            return "\n".join(self.lines())
        text = self._text
        return text[:-1] if text.endswith("\n") else text

    def lowered(self) -> str | bytes:
        """The file lowercased, for `in` tests of ASCII words: its UTF-8 bytes when at hand and its
        lines are the text's (ASCII lowercasing of bytes is a fraction of str.lower; the only
        characters str.lower makes ASCII letters of, the Kelvin sign and the dotted I, give a 'k'
        and an 'i' followed by a combining dot, which put no such word together)."""
        if self._raw is not None and self._plain():
            return self._raw.lower()
        return self._text.lower()


def _parse(text: str, rel: str, strict: bool = False) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes in old code
            return ast.parse(text, filename=rel)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        if strict:
            raise
        return None


_BOMS = (  # UTF-32 first: its little-endian mark begins with UTF-16's
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _wide_encoding(data: bytes) -> str | None:
    """`UTF-16` or `UTF-32` for a file that starts with that byte-order mark, else None."""
    if data[:1] not in (b"\xff", b"\xfe", b"\x00"):
        return None
    return next((name for bom, name in _BOMS if data.startswith(bom)), None)


def _declared(data: bytes) -> str | None:
    """The codec a coding declaration in the first two lines names (PEP 263), or None."""
    if b"coding" not in data[:1024]:
        return None
    for line in data.split(b"\n", 2)[:2]:
        if m := _CODING.match(line):
            return m[1].decode("ascii")
    return None


def _decode_with(data: bytes) -> tuple[str | None, str]:
    """The text and the codec that decodes it: UTF-8, else the file's coding declaration; a
    declaration Python does not know makes the file one Python refuses: (None, the reason)."""
    codec = _declared(data)
    if codec is not None:
        try:
            codecs.lookup(codec)
        except LookupError:
            return None, f"unknown encoding {codec!r} in its coding declaration (Python refuses the file)"
    try:
        return data.decode("utf-8-sig"), "utf-8-sig"
    except UnicodeDecodeError:
        pass
    if codec is not None:
        try:
            return data.decode(codec), codec
        except (UnicodeError, LookupError, ValueError):  # also a codec for bytes, not text
            return None, ""
    return None, ""


def _syntax_reason(text: str, exc: BaseException) -> str:
    line = getattr(exc, "lineno", None)
    where = f" (line {line})" if line else ""
    if isinstance(exc, SyntaxError) and _PY2.search(text):
        return f"Python 2 source, not parsed{where}"
    if isinstance(exc, (RecursionError, MemoryError)):
        return "too deeply nested to parse"
    msg = getattr(exc, "msg", None) or str(exc)
    return f"syntax error: {msg}{where}"
