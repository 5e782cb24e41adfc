"""A private function that nothing in the tree calls: the decision inside it guards no path, and
the build arch list inside it builds nothing (FlashInfer's packaged `build_backend.py` keeps
`_build_nccl_ep()` with its `-gencode` list, which no step of the build calls any more).

torch 2.13's `torch/utils/_triton.py` keeps `has_datacenter_blackwell_tma_device()` (10.x only) beside
the helpers inductor uses; no file of the tree names it, so that 12.0 "returns False" there costs
it nothing. A medium or high gate finding in a module-level function, private by its name (`_x`) or
its module's (`_triton.py`), that no Python file of the tree names but for its own `def` is low,
with `extra.uncalled` naming it. A public function of a public module may be called from outside
the tree (an engine calling its kernel library): it keeps its severity. A decorated one may be
registered by name (`@register_func("tvm.contrib.nvcc.supports_fp4")`): it keeps it too; caching
wrappers (`@functools.cache`) register nothing.
"""

from __future__ import annotations

import re

from capgap.findings import Finding, lowered
from capgap.judging.unread import Reader, demote_where_none_names

_NAME = re.compile(r"[A-Za-z_]\w*")


def _private(finding: Finding, name: str) -> bool:
    parts = finding.path.split("/")
    modules = [p.removesuffix(".py") for p in parts]
    return name.startswith("_") or any(m.startswith("_") and not m.startswith("__") for m in modules)


def _named_beyond_def(text: str, name: str) -> bool:
    """Does the text name `name` other than in its own `def` line, or is that def decorated by
    something that may register it by name?"""
    if name not in text:  # (most files: one substring search)
        return False
    escaped = re.escape(name)
    own_def = re.compile(rf"[ \t]*(?:async[ \t]+)?def[ \t]+{escaped}\b")
    lines: list[str] | None = None
    for hit in re.finditer(rf"\b{escaped}\b", text):
        start = text.rfind("\n", 0, hit.start()) + 1
        if not own_def.match(text, start):
            return True
        lines = text.split("\n") if lines is None else lines
        if any(not _WRAPS.match(d) for d in decorators(lines, text.count("\n", 0, start))):
            return True
    return False


# decorators that wrap a function without registering it anywhere: caching, grad modes, descriptors
_WRAPS = re.compile(
    r"@(?:functools\.)?(?:cache|lru_cache|cached_property)\b|@(?:staticmethod|classmethod|property)\b"
    r"|@torch\.(?:no_grad|inference_mode)\b"
)
_CLOSING = re.compile(r"^[)\]}]+,?$")


def decorators(lines: list[str], at: int) -> list[str]:
    """The decorator lines above the def on line `at` (a decorator's call may span lines: its
    closing bracket sits at the def's indent, its arguments deeper)."""
    indent = len(lines[at]) - len(lines[at].lstrip())
    found: list[str] = []
    for line in reversed(lines[max(at - _DECORATOR_LINES, 0) : at]):
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        if not stripped or depth > indent or _CLOSING.match(stripped):
            continue
        if depth < indent or not stripped.startswith("@"):
            break
        found.append(stripped)
    return found


_DECORATOR_LINES = 40


def demote(findings: list[Finding], read: Reader) -> list[Finding]:
    """The findings, those inside a private function nothing names demoted to low."""

    def function(finding: Finding) -> str | None:
        name = str(finding.extra.get("context") or "")
        return name if _NAME.fullmatch(name) and _private(finding, name) else None

    def lower(finding: Finding, name: str) -> Finding:
        what = "the decision in it guards no path"
        if finding.rule == _BUILDS:
            what = "the arch list in it builds nothing"
        return lowered(finding, f"nothing in the tree calls {name}(): {what}", "uncalled", name)

    rules = ("gate-excludes-arch", _BUILDS)
    return demote_where_none_names(findings, read, function, _named_beyond_def, lower, rules)


_BUILDS = "build-missing-arch"  # a `-gencode` list written in a function (a build script's step)
