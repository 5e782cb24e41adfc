"""The archs words name, and what every one of them has that a target lacks.

A refusal's message ("requires SM100 or SM103"), a comment above a gate ("Hopper only") or a quoted
backend's words name archs; what those archs share and the target lacks (an MMA generation:
tcgen05, wgmma) is what the path they are named for needs. Read by the gate rules alike.
"""

from __future__ import annotations

import re

from capgap.arch import ArchFacts, all_facts

# An arch a refusal names: `sm_100a`, `SM103`, `sm_10x`, `compute capability of 90`, `9.x`, `10.3`,
# `Hopper`; a generation name that covers both sides (`Blackwell`) names none.
_NAMED_ARCH = re.compile(
    r"\bsm[_ ]?(?P<sm>\d{2,3})[af]?(?![\dx])|\bsm[_ ]?(?P<smx>\d{1,2})x\b"
    r"|capability (?:of )?(?P<num>\d{2,3})\b|\b(?P<fam>\d{1,2})\.x\b|\b(?P<maj>\d{1,2})\.(?P<min>\d)\b"
    r"|\b(?P<hopper>hopper)\b"
    # "supports only compute capability major versions 10 and 11"
    r"|\bmajor versions? (?P<majs>\d{1,2}(?:(?:\s*,|\s+and|\s+or)\s*\d{1,2})*)\b",
    re.I,
)
_MMA = ("tcgen05", "wgmma")
_ONE_ARCH = r"(?:sm[_ ]?\d{1,3}[a-z]?x?|\d{1,2}\.(?:\d|x))"
_NAMED_AS_OUT = re.compile(
    rf"\b(?:not|except|excluding|other than)\s+(?:on\s+|for\s+)?{_ONE_ARCH}"
    rf"(?:\s*(?:/|,|or|and|nor)\s*{_ONE_ARCH})*",
    re.I,
)


def need_of(
    text: str, target: ArchFacts, either: bool = False, built: bool = False
) -> tuple[tuple[str, ...] | None, list[str]]:
    """What every arch `text` names has and the target lacks (words read whole: a sentence, where
    an apostrophe is no quote; `built`: a library built per family, whose SM100 build a tcgen05
    GPU of another family lacks)."""
    facts = all_facts()
    named: list[str] = []
    # "only implements on SM100/SM110 (not SM120)": an arch named to be left out is not named as one
    # the path is written for
    text = _NAMED_AS_OUT.sub(" ", text)
    for hit in _NAMED_ARCH.finditer(text):
        if hit["sm"]:
            ccs = [f"{int(hit['sm']) // 10}.{int(hit['sm']) % 10}"]
        elif hit["num"]:
            ccs = [f"{int(hit['num']) // 10}.{int(hit['num']) % 10}"]
        elif hit["smx"] or hit["fam"]:
            major = int(hit["smx"] or hit["fam"])
            ccs = [cc for cc, a in facts.items() if a.major == major]
        elif hit["majs"]:
            majors = {int(m) for m in re.findall(r"\d+", hit["majs"])}
            ccs = [cc for cc, a in facts.items() if a.major in majors]
        elif hit["maj"]:
            ccs = [f"{hit['maj']}.{hit['min']}"]
        else:
            ccs = ["9.0"]
        named += [cc for cc in ccs if cc in facts and cc not in named]
    if not named or any(facts[cc].major == target.major for cc in named):
        return None, named
    archs = [facts[cc] for cc in named]
    for feat in (*_MMA, "sm100_build") if built else _MMA:
        # (Hopper and Blackwell named together share no MMA generation: that is `either`'s case)
        if all(a.has(feat) for a in archs) and not target.has(feat):
            return (feat,), named
    if either and all(any(a.has(m) for m in _MMA) for a in archs) and not any(target.has(m) for m in _MMA):
        # a refusal requiring "Hopper SM90 or Blackwell SM100/SM103": every arch it accepts has an
        # MMA generation of its own, the target neither (a kernel per generation, none for it)
        return _MMA, named
    return None, named
