"""Features the tree implements again for the target's own family, in a module of their own.

FlashInfer keeps its SM100 DSA indexer in `experimental/cake_dsa_indexer_det/` (tables keyed
`sm_100a`, `sm_103a`) and the 12.x one in `experimental/sm120_dsa_indexer.py`; its NVFP4 sparse MLA
decode in `experimental/nvfp4_sparse_mla_decode/` and 12.x's in `mla/_sparse_mla_sm120/`. That
the SM100 module leaves 12.0 out is no loss: 12.0 has the feature in its own module. A finding in
a module whose words name every word of such a module's feature (`dsa`, `indexer`; the family's
arch token aside) is demoted to low and names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from capgap.arch import ArchSpec
from capgap.findings import Finding, lowered

_SEVERE = ("medium", "high")
_RULES = frozenset(
    {"gate-excludes-arch", "table-missing-arch", "build-missing-arch", "registry-excludes-arch"}
)
# words of a path that say where code sits or how it is built, not which feature it is
_GENERIC = frozenset(
    {
        "py", "init", "kernel", "kernels", "op", "ops", "impl", "util", "utils", "jit", "api", "module",
        "experimental", "common", "core", "base", "backend", "backends", "layer", "layers", "runtime",
        "test", "tests", "csrc", "cuda", "src", "lib", "v1", "v2",
    }
)  # fmt: skip
_MIN_WORDS = 2  # one shared word (`mla`, `gemm`) names a field, not a feature


def _family_token(major: int) -> re.Pattern[str]:
    """`sm120`, `sm_121`, `sm12x` for major 12 (a word of a path, lowercased)."""
    return re.compile(rf"^sm_?{major}(?:\d[af]?|x)$")


def _words(part: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", part.lower()) if w]


def family_modules(rels: Iterable[str], major: int) -> dict[str, frozenset[str]]:
    """Each module or package of the tree named for the family of `major` -> its feature words
    (`flashinfer/experimental/sm120_dsa_indexer.py` -> dsa, indexer)."""
    token = _family_token(major)
    out: dict[str, frozenset[str]] = {}
    spelled = (f"sm{major}", f"sm_{major}")
    for rel in rels:
        low = rel.lower()
        if not rel.endswith(".py") or not any(word in low for word in spelled):
            continue  # (most paths name no arch: a substring test spares the split)
        parts = rel.removesuffix(".py").split("/")
        for end, part in enumerate(parts, 1):
            words = _words(part)
            if not any(token.match(w) for w in words):
                continue
            feature = frozenset(
                w for w in words if not token.match(w) and w not in _GENERIC and not w.isdigit()
            )
            if len(feature) >= _MIN_WORDS:
                out.setdefault("/".join(parts[:end]), feature)
    return out


def demote(findings: list[Finding], rels: list[str], archs: tuple[ArchSpec, ...]) -> list[Finding]:
    """The findings, those in a module whose feature the target's family has a module of its own
    for demoted to low."""
    by_major = {a.major: family_modules(rels, a.major) for a in archs}
    out: list[Finding] = []
    for finding in findings:
        own = ""
        modules = by_major.get(int(finding.arch.split(".")[0]), {}) if finding.severity in _SEVERE else {}
        if finding.rule in _RULES and modules:
            parts = finding.path.removesuffix(".py").split("/")
            here = {w for part in parts[-2:] for w in _words(part)}
            own = next(
                (
                    m
                    for m, feature in sorted(modules.items())
                    if feature <= here and not finding.path.startswith(m)
                ),
                "",
            )
        if own:
            said = f"{finding.arch}'s family has this feature in a module of its own: {own}"
            finding = lowered(finding, said, "own_module", own)
        out.append(finding)
    return out
