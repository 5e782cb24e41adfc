"""Parse every spelling of a compute capability that users and engine code write.

`12.0`, `12`, `120`, `sm_120`, `sm120`, `SM_120a`, `sm_100f`, `compute_120`, `(12, 0)`,
`[12, 0]`, `12.0a`, `9.0+PTX` (TORCH_CUDA_ARCH_LIST), `120a-real` / `90-virtual` (CMake),
`"10.3"` with quotes. `a` = arch-specific, `f` = family-specific (CUDA 12.9+).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capgap.arch.facts import ArchFacts, all_facts
from capgap.errors import UsageError

# Spellings from before CUDA 13 that now name another cc.
RENAMED = {"10.1": "11.0"}

_PREFIXED = re.compile(r"^(?P<kind>sm|compute|arch)_?(?P<num>\d{2,3})(?P<suffix>[af]?)$")
_DOTTED = re.compile(r"^(?P<major>\d{1,2})\.(?P<minor>\d)(?P<suffix>[af]?)$")
_TUPLE = re.compile(r"^[\(\[]\s*(?P<major>\d{1,2})\s*,\s*(?P<minor>\d)\s*,?\s*[\)\]]$")
_BARE = re.compile(r"^(?P<num>\d{1,3})(?P<suffix>[af]?)$")


@dataclass(frozen=True)
class ArchSpec:
    """A parsed arch: the compute capability plus how it was qualified."""

    major: int
    minor: int
    suffix: str = ""  # "", "a" (arch-specific) or "f" (family)
    kind: str = ""  # "sm" (SASS), "compute" (PTX) or "" (unqualified)

    @property
    def cc(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def number(self) -> int:
        return self.major * 10 + self.minor

    @property
    def sm(self) -> str:
        return f"sm_{self.number}{self.suffix}"

    @property
    def facts(self) -> ArchFacts:
        return all_facts()[self.cc]

    def __str__(self) -> str:
        return self.cc + self.suffix


def _from_number(num: int) -> tuple[int, int]:
    """`12` -> 12.0 (a major alone), `120` -> 12.0, `90` -> 9.0, `103` -> 10.3."""
    if num < 20:
        return num, 0
    return num // 10, num % 10


def _canonical(text: str) -> str:
    return _split_qualifier(text)[0]


def _split_qualifier(text: str) -> tuple[str, str]:
    """Strip quotes and a CMake `-real`/`-virtual` or torch `+PTX` qualifier; return (core, kind)."""
    s = text.strip().strip("'\"").strip().lower()
    kind = ""
    if m := re.search(r"-(real|virtual)$", s):
        kind = "sm" if m.group(1) == "real" else "compute"
        s = s[: m.start()]
    s = re.sub(r"\s*\+\s*ptx$", "", s)
    return s, kind


def try_parse_arch(text: str) -> ArchSpec | None:
    """Parse any accepted spelling to a known arch, or None (engine scanners use this)."""
    core, kind = _split_qualifier(text)
    spec = _parse_shape(core)
    if spec is None:
        return None
    cc = RENAMED.get(spec.cc, spec.cc)
    if cc not in all_facts():
        return None
    major, minor = (int(p) for p in cc.split("."))
    return ArchSpec(major, minor, spec.suffix, kind or spec.kind)


def arch_shaped(text: str) -> bool:
    """Is this spelled like a compute capability, known or not (`(10, 7)`, `107`, `sm_110f`)? A
    comparison with an arch this scan has no facts for still tells every known arch apart."""
    spec = _parse_shape(_split_qualifier(text)[0])
    return spec is not None and 5 <= spec.major <= 15 and 0 <= spec.minor <= 9


def _parse_shape(s: str) -> ArchSpec | None:
    if m := _PREFIXED.match(s):
        major, minor = _from_number(int(m["num"]))
        kind = "compute" if m["kind"] == "compute" else "sm"
        return ArchSpec(major, minor, m["suffix"], kind)
    if m := _DOTTED.match(s):
        return ArchSpec(int(m["major"]), int(m["minor"]), m["suffix"])
    if m := _TUPLE.match(s):
        return ArchSpec(int(m["major"]), int(m["minor"]))
    if m := _BARE.match(s):
        major, minor = _from_number(int(m["num"]))
        return ArchSpec(major, minor, m["suffix"])
    return None


def _tokens(text: str) -> list[str]:
    words = re.split(r"[\s_\-]+", text.strip().strip("'\"").lower())
    return [w for w in words if w and w != "nvidia"]


def _within(part: list[str], whole: list[str]) -> bool:
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def product_ccs(text: str) -> dict[str, list[str]]:
    """cc -> the products of the facts that `text` names: its words in a product's name, in order
    ("RTX PRO 6000": both RTX PRO 6000 Blackwell editions), or a product's in it ("NVIDIA H100
    80GB HBM3": H100)."""
    query = _tokens(text)
    if not query or not any(c.isalpha() for w in query for c in w):
        return {}
    out: dict[str, list[str]] = {}
    for cc, facts in all_facts().items():
        for product in facts.products:
            words = _tokens(product)
            if words and (_within(query, words) or _within(words, query)):
                out.setdefault(cc, []).append(product)
    return out


def parse_arch(text: str) -> ArchSpec:
    """Parse a user's spelling, or a product name of the facts (`RTX PRO 6000`); an unknown one is
    a UsageError naming the closest valid ones."""
    spec = try_parse_arch(text)
    if spec is None:
        named = product_ccs(text)
        if len(named) == 1:
            [cc] = named
            major, minor = (int(p) for p in cc.split("."))
            return ArchSpec(major, minor)
        if named:
            which = "; ".join(f"{cc} ({', '.join(p)})" for cc, p in sorted(named.items()))
            raise UsageError(f"{text!r} names GPUs of several archs: {which}; give the cc or a longer name")
        raise UsageError(f"unknown GPU architecture {text!r}; closest known: {', '.join(closest(text))}")
    if spec.suffix == "a" and spec.major < 9:
        raise UsageError(
            f"{text!r}: arch-specific 'a' targets exist from 9.0 on; closest valid: sm_{spec.number}, sm_90a"
        )
    if spec.suffix == "f" and spec.major < 10:
        raise UsageError(
            f"{text!r}: family 'f' targets exist from 10.0 on (CUDA 12.9); "
            f"closest valid: sm_{spec.number}, sm_100f"
        )
    return spec


def closest(text: str, n: int = 3) -> list[str]:
    """The known ccs nearest to what `text` seems to mean (by number, else by spelling)."""
    known = list(all_facts())
    shape = _parse_shape(_canonical(text))
    if shape is not None:
        value = shape.major * 10 + shape.minor
        ranked = sorted(known, key=lambda cc: (abs(all_facts()[cc].number - value), all_facts()[cc].number))
        return ranked[:n]
    import difflib

    spellings = {f"sm_{all_facts()[cc].number}": cc for cc in known}
    spellings.update({cc: cc for cc in known})
    hits = difflib.get_close_matches(_canonical(text), list(spellings), n=n, cutoff=0.0)
    return list(dict.fromkeys(spellings[h] for h in hits))[:n] or known[-n:]
