"""Code the target never runs: a package (or module) every import of which, from outside it, sits
under a test the target fails.

vLLM vendors `third_party/tml_fa4` (a fork of FlashAttention-4) and imports it in one place only,
`if _use_sheared_bias():` (majors 10 and 11). The fork's own SM120 arm refuses paged KV, and a
rule reads that as 12.0's loss; but no 12.0 run ever loads the fork. A finding inside such a
package is demoted to low, and says where the package is imported and under which test.

Only a package that some scanned module imports under a test the target fails is a candidate
(judging.gatedimports, read at extraction); then every file of the tree that names it is read, and
one import the target may reach (at module level, in a function, under a test that holds for it
or cannot be read, in a file the scan kept no facts of) keeps it reached.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from capgap.arch import ArchSpec
from capgap.arch.facts import all_facts
from capgap.findings import Finding, lowered
from capgap.judging import gatedimports
from capgap.judging.reach import truth
from capgap.judging.records import FileFacts
from capgap.judging.registry import Registry
from capgap.judging.symbolic import evaluate

_MIN_DEPTH = 3  # `vllm.third_party.tml_fa4`: a package two levels below the top, or deeper
_SEVERE = ("medium", "high")

# last names -> (relative path, text) of each file naming one, read as asked for
Reader = Callable[[Iterable[str]], Iterable[tuple[str, str]]]
Site = tuple[str, int]  # importing file, the import's first line


def demote(
    findings: list[Finding], files: list[FileFacts], reg: Registry, archs: tuple[ArchSpec, ...], read: Reader
) -> list[Finding]:
    """The findings, those inside a package the target never imports demoted to low."""
    packages = {p for f in findings if f.severity in _SEVERE for p in _packages(f.path)}
    failed = _failed_sites(files, packages, reg, archs) if packages else {}
    candidates = {p for (p, _cc) in failed}
    # one scanned module outside it importing it at module level: a package the engine loads
    for f in files if candidates else ():
        for p in _loaded(list(f.top_imports)) & candidates:
            if _outside(f.module, p):
                candidates.discard(p)
    if not candidates:
        return findings
    gated = {p: {site for (q, _cc), tests in failed.items() if q == p for site in tests} for p in candidates}
    # the files naming a package, and those that import modules named in strings
    sites = _sites(read({*(p.rpartition(".")[2] for p in candidates), *gatedimports.DYNAMIC}), gated)
    why: dict[tuple[str, str], str] = {}
    for (p, cc), tests in failed.items():
        every = sites.get(p, [])
        if every and all(site in tests for site in every):
            where = "; ".join(
                dict.fromkeys(f"{rel}:{line}, under `{tests[rel, line]}`" for rel, line in every)
            )
            why[p, cc] = f"{p} is imported only at {where}, which {cc} fails"
    out = []
    for finding in findings:
        said = next((w for p in _packages(finding.path) if (w := why.get((p, finding.arch)))), "")
        if said and finding.severity in _SEVERE:
            finding = lowered(finding, f"{finding.arch} never runs this code: {said}", "unreached", said)
        out.append(finding)
    return out


def _named_in_string(package: str, text: str) -> bool:
    """May a string of `text` name the package: whole (`"pkg.fork"`), or as its parent and a name
    filled in (`f"pkg.{name}"`, `"pkg." + name`)?"""
    parent = re.escape(package.rpartition(".")[0])
    return package in text or re.search(rf"{parent}\.(?:\{{|[\"']\s*\+)", text) is not None


def _packages(path: str) -> list[str]:
    """The packages a file lies in, two levels below the top or deeper, and the module itself
    (`a/b/c/d.py`: `a.b.c`, `a.b.c.d`; an `__init__.py` is its package)."""
    parts = path.removesuffix(".py").removesuffix("/__init__").split("/")
    return [".".join(parts[:n]) for n in range(_MIN_DEPTH, len(parts) + 1)]


def _loaded(dotted: list[str]) -> set[str]:
    """The modules an import loads: each name it names and the packages above it."""
    return {".".join(parts[:n]) for d in dotted for parts in [d.split(".")] for n in range(1, len(parts) + 1)}


def _outside(module: str, package: str) -> bool:
    return module != package and not module.startswith(package + ".")


def _failed_sites(
    files: list[FileFacts], packages: set[str], reg: Registry, archs: tuple[ArchSpec, ...]
) -> dict[tuple[str, str], dict[Site, str]]:
    """(package, arch) -> the scanned imports of it under a test the arch fails, each with the test."""
    out: dict[tuple[str, str], dict[Site, str]] = {}
    for f in files:
        for gated in f.gated_imports:
            line, test, names = gated.split("\t")
            hit = {p for p in _loaded(names.split(",")) & packages if _outside(f.module, p)}
            if not hit:
                continue
            try:
                node = ast.parse(test.strip(), mode="eval").body
            except (SyntaxError, ValueError):
                continue
            sym = evaluate(node, reg.context(f.module_scope, f))
            if sym.kind != "pred":
                continue  # a test no arch decides (`if TYPE_CHECKING:`) says nothing of the target
            for arch in archs:
                if truth(sym, all_facts()[arch.cc]) is False:
                    for p in hit:
                        out.setdefault((p, arch.cc), {})[f.path, int(line)] = test.strip()
    return out


def _sites(texts: Iterable[tuple[str, str]], gated: dict[str, set[Site]]) -> dict[str, list[Site]]:
    """Each package of `gated` none of whose importers outside it imports it elsewhere than at the
    sites given for it (under a test some arch fails) -> where they import it."""
    out: dict[str, list[Site]] = {p: [] for p in gated}
    for rel, text in texts:
        # an import of `a.b.c` spells `a.b.c`, or `a.b` (`from a.b import c`), or is relative
        if "from ." not in text and not any(p.rpartition(".")[0] in text for p in out):
            continue
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        if any(word in text for word in gatedimports.DYNAMIC):
            # a module named in a string and imported by it (`import_module(f"pkg.{name}")`):
            # where that may be the package, it may be loaded anywhere
            for p in [p for p in out if _outside(module, p) and _named_in_string(p, text)]:
                del out[p]
        for line, _indent, dotted in gatedimports.imports(text, module, rel.endswith("__init__.py")):
            loaded = _loaded(dotted)
            for p in [p for p in out if p in loaded]:
                if not _outside(module, p):
                    continue
                if (rel, line) not in gated[p]:
                    del out[p]  # imported where every arch may run it: reached
                else:
                    out[p].append((rel, line))
        if not out:
            break  # every package is reached: no need to read on
    return out
