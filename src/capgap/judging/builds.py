"""Find arch lists in build files and build strings (no syntax tree needed: line patterns).

`TORCH_CUDA_ARCH_LIST="8.0 9.0+PTX"`, `-gencode arch=compute_90a,code=sm_90a`,
`CMAKE_CUDA_ARCHITECTURES 80;90`, `cuda_archs_loose_intersection(X_ARCHS "9.0a;10.0a" ...)`,
`cuda_archs = [...]`.
"""

from __future__ import annotations

import io
import re
import tokenize

from capgap.arch import ArchSpec, try_parse_arch
from capgap.judging.records import BuildList

BUILD_NAMES = {"setup.py", "CMakeLists.txt", "pyproject.toml", "setup.cfg", "Makefile", "build.sh"}
BUILD_SUFFIXES = (".cmake", ".sh")
# Bytes that must occur in a file before its lines are read for arch lists.
BUILD_TOKENS = (b"ARCH_LIST", b"gencode", b"ARCHITECTURES", b"cuda_archs", b"CUDA_ARCHS", b"generate-code")

_NAMED = re.compile(
    r"(?P<sym>TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES|\w*CUDA_ARCHS"
    r"|cuda_archs_\w+\(\s*(?P<var>\w+)|cuda_archs)[\s\"'=:(\[{,]*(?P<list>[^\n#]*)"
)
_GENCODE = re.compile(r"(?:arch|code)\s*=\s*\[?\s*((?:sm|compute)_\d{2,3}[af]?)")
_ITEM = re.compile(r"(?:sm_|compute_)?\d{1,2}(?:\.\d)?\d?[af]?(?:\+PTX|-real|-virtual)?", re.I)


# A JIT flag builder given the majors its kernels compile for (FlashInfer's
# `get_nvcc_flags_list(supported_major_versions=[9, 10])`): only the device's archs of those majors.
_JIT_MAJORS = re.compile(
    r"supported_major_versions\s*=\s*(?:\[([\d\s,]*)\]|(?:list\(|tuple\()?([A-Za-z_]\w*)\)?)"
)
_CONSTANT = r"^{name}\s*(?::[^=\n]*)?=\s*[\[(]([\d\s,]*)[\])]"  # NAME: tuple[int, ...] = (10,)
JIT_MAJORS = "supported_major_versions"


_DEF_LINE = re.compile(r"([ \t]*)(?:async[ \t]+)?def[ \t]")


def _enclosing_def(text: str, pos: int) -> int:
    """Where the line of the function holding offset `pos` begins, less one (-1: none): the
    nearest `def` above whose body was not closed by a line indented as far as it or less (a
    nested helper, `def is_valid_block_y(...)`, ended before the call that follows it)."""
    end = text.rfind("\n", 0, pos)
    line = text[end + 1 : text.find("\n", pos) if "\n" in text[pos:] else len(text)]
    floor = len(line) - len(line.lstrip())
    while end >= 0:
        begin = text.rfind("\n", 0, end)
        line = text[begin + 1 : end]
        end = begin
        code = line.lstrip()
        if not code or code.startswith(("#", ")", "]", "}")):
            continue
        indent = len(line) - len(code)
        if _DEF_LINE.match(line) and indent < floor:
            return begin
        floor = min(floor, indent)
    return -1


def jit_major_lists(text: str) -> list[BuildList]:
    """The literal major lists a JIT module's flag builder is called with (one per call), each
    with the sources its function names and what the function's own name says it needs."""
    from capgap.judging import evidence

    out: list[BuildList] = []
    for m in _JIT_MAJORS.finditer(text):
        if "#" in text[text.rfind("\n", 0, m.start()) + 1 : m.start()]:
            continue  # in a comment
        listed = m[1]
        if listed is None and m[2] not in {"None", "True", "False"}:  # a module constant of majors
            const = re.search(_CONSTANT.format(name=re.escape(m[2])), text, re.M)
            listed = const[1] if const else None
        majors = [x.strip() for x in (listed or "").split(",") if x.strip()]
        if not majors:
            continue
        line = text.count("\n", 0, m.start()) + 1
        first = text[text.rfind("\n", 0, m.start()) + 1 : text.find("\n", m.end())].strip()
        bl = BuildList(line, JIT_MAJORS, majors, first[:200])
        start = _enclosing_def(text, m.start())
        end = text.find("\ndef ", m.end())
        body = text[start + 1 : end if end >= 0 else len(text)]
        name = _DEF_NAME.match(body.lstrip())
        for hit in _SOURCE_NAME.finditer(body):
            source = re.sub(r"\{[^}]*\}", "*", hit[1])
            if source not in bl.sources and source.rsplit("/", 1)[-1] not in {"*.cu", "*.cuh"}:
                bl.sources.append(source)
        if name:
            bl.function = name[1]
            needs, where = evidence.needs_with_evidence(name[1].lower())
            if ("tcgen05",) not in needs and _SM103.search(name[1].lower()):
                # a module builder named for sm103 compiles sm_103a kernels (tcgen05); as a gate's
                # name elsewhere, `sm103` is often only a tuning choice, so judging.evidence keeps it out
                needs, where = [*needs, ("tcgen05",)], [*where, f"'{_SM103.search(name[1].lower())[0]}'"]
            bl.needs += needs
            bl.needs_from += [f"{w} in the name {name[1]}" for w in where]
        out.append(bl)
    return out


_DEF_NAME = re.compile(r"def\s+(\w+)")
_SM103 = re.compile(r"_sm_?103a?(?=_|$)")
_SOURCE_NAME = re.compile(r"""["']([\w./{}\-]*?\.cuh?)["']""")


def variant_stem(function: str) -> str:
    """A JIT module builder's name without its arch (gen_x_sm90_module -> gen_x_module): the
    builders of one module's per-arch variants share it."""
    return re.sub(r"_?sm_?\d{2,3}[af]?", "", function.lower())


def is_build_file(name: str) -> bool:
    return name in BUILD_NAMES or name.endswith(BUILD_SUFFIXES) or name.startswith("Dockerfile")


def find_build_lists(text: str, python_module: bool = False) -> list[BuildList]:
    """Arch lists in a build file; in a Python module only TORCH_CUDA_ARCH_LIST and -gencode strings
    count (a Python tuple of supported archs is a gate, not a build list)."""
    out: list[BuildList] = []
    gencode_block: list[tuple[int, str, list[str]]] = []
    quoted: frozenset[int] | None = None  # a Python module's lines inside a long string, when asked
    within = block_within = ""  # the module-level function the line is in (a Python module's)
    for lineno, line in enumerate(text.splitlines(), 1):
        if len(line) > 2000:
            continue
        if python_module and line[:1].strip() and not line.startswith(("#", ")", "]", "}", "@")):
            head = _TOP_DEF.match(line)
            within = head[1] if head is not None else ""
        m = _NAMED.search(line)
        if m and "#" in line[: m.start()]:
            m = None  # `# Bundled FA3 is compiled for TORCH_CUDA_ARCH_LIST verbatim; without "9.0a"`
        if (
            m
            and python_module
            and (m["sym"] != "TORCH_CUDA_ARCH_LIST" or _prose_or_formatted(line, m.start()))
        ):
            m = None
        if m and python_module:
            quoted = _long_string_lines(text) if quoted is None else quoted
            if lineno in quoted:  # ``TORCH_CUDA_ARCH_LIST="6.1 8.6" python build.py`` in a docstring
                m = None
        if m:
            items = [i for i in _ITEM.findall(m["list"]) if try_parse_arch(i) is not None]
            if items:
                out.append(BuildList(lineno, m["var"] or m["sym"], items, line.strip(), within=within))
                continue
        archs = _GENCODE.findall(line)
        if archs:
            if gencode_block and lineno - gencode_block[-1][0] > 3:
                out.extend(_flush(gencode_block, block_within))
                gencode_block = []
            if not gencode_block:
                block_within = within
            gencode_block.append((lineno, line.strip(), archs))
    out.extend(_flush(gencode_block, block_within))
    if not python_module and "cuda_archs" in text:
        _cmake_sources(text, out)
    return out


_CU_PATH = re.compile(r"""["'\s(]([\w./${}\-]+\.cu)\b""")
_SOURCES_SPAN = 60  # lines after an intersection where its sources are set


def _cmake_sources(text: str, found: list[BuildList]) -> None:
    """The .cu files set in the lines after each `cuda_archs_loose_intersection(X_ARCHS ...)`,
    up to the next one: what that arch list compiles (`set(X_SRCS "csrc/..._sm90.cu" ...)`)."""
    lines = text.splitlines()
    starts = sorted(bl.line for bl in found if "cuda_archs" in bl.source)
    for bl in found:
        if "cuda_archs" not in bl.source:
            continue
        later = [n for n in starts if n > bl.line]
        end = min(later[0] - 1 if later else len(lines), bl.line + _SOURCES_SPAN)
        for line in lines[bl.line : end]:
            bl.sources.extend(m[1] for m in _CU_PATH.finditer(line) if m[1] not in bl.sources)
    # `if(CUDA >= 13) intersection(X "10.0f") else() intersection(X "10.0a") endif()`: one list, two spellings
    for bl, nxt in zip(found, found[1:], strict=False):
        if nxt.symbol == bl.symbol and nxt.line - bl.line <= 3 and not bl.sources:
            bl.sources = nxt.sources


def _long_string_lines(text: str) -> frozenset[int]:
    """The lines of a Python module that lie inside a string spanning several lines (a docstring's
    usage example, a message): none where the module does not tokenize."""
    lines: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return frozenset()
    return frozenset(lines)


def _prose_or_formatted(line: str, start: int) -> bool:
    """In Python, `TORCH_CUDA_ARCH_LIST=9.0a+PTX` inside a message (a line of a string literal) or a
    value built in an f-string (`f"{arch}..."`: the device's own arch) is no build list."""
    stripped = line.lstrip()
    if stripped[:1] in {'"', "'"} or stripped[:2] in {'f"', "f'"}:
        return True
    return bool(re.search(r"""\bf["']""", line[start:])) or bool(
        re.search(r"""\bf["'][^"']*$""", line[:start])
    )


def _flush(block: list[tuple[int, str, list[str]]], within: str = "") -> list[BuildList]:
    archs = list(dict.fromkeys(a for _, _, items in block for a in items))
    ccs = {try_parse_arch(a).cc for a in archs if try_parse_arch(a) is not None}  # type: ignore[union-attr]
    if len(ccs) < 2:  # one arch per JIT build is a deliberate per-arch kernel, not an arch list
        return []
    return [BuildList(block[0][0], "-gencode", archs, block[0][1], within=within)]


_TOP_DEF = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)")


def coverage(items: list[str], target: ArchSpec) -> str:
    """'sass' when some listed cubin runs on the target, 'ptx' when only JIT from PTX, else ''."""
    ptx = False
    for item in items:
        spec = try_parse_arch(item)
        if spec is None:
            continue
        plus_ptx = "+ptx" in item.lower()
        is_ptx = spec.kind == "compute" or plus_ptx
        if spec.suffix == "a":
            if spec.cc == target.cc and not plus_ptx:
                return "sass"
            continue
        if spec.major == target.major and spec.minor <= target.minor:
            return "sass"
        if is_ptx and spec.suffix == "" and spec.number <= target.number:
            ptx = True
    return "ptx" if ptx else ""
