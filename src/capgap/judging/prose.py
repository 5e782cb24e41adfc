"""Sentences around a decision that name the archs a path is written for.

Authors say in words which GPUs a path serves: a docstring ("Fused Kimi KDA decode kernel for SM100
and SM103"), a comment above the test, the log line of the branch ("Use trtllm_mla ... on
SM100/SM103."). The rules read the archs those sentences name the way they read a refusal's words
(rules.gate_excludes_arch `_written_for_archs`): what all of them have and the target lacks is what
the path is written with. Extraction keeps only the sentences; nothing is judged here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_SENTENCES = 8
_MAX_CHARS = 220
_OPENING_LINES = 40  # a docstring and leading comments longer than this say nothing more to us

# An arch named in prose: `SM100`, `sm_90a`, `SM 100`, `SM10x`, `compute capability 10.0`, `9.x`,
# `Hopper` (a generation name that covers both sides, `Blackwell`, names none).
ARCH_WORD = re.compile(
    r"(?<![a-z0-9])sm[_ ]?(?:\d{2,3}[a-z]?|\d{2}x)(?![0-9])|compute capabilit(?:y|ies) (?:of )?\(?\d{1,3}"
    r"|(?<![\w.])\d{1,2}\.x\b|\bhopper\b|\b(?:[hg]b?[12]0{2}|gb?300|b[23]00|h20|h800)\b",
    re.I,
)
# What every ARCH_WORD match holds, lowercased, in an ASCII text (re.I also lets a few letters
# beyond ASCII stand for `s` and `i`: such a text goes to the regex).
_ARCH_HINTS = ("sm", "compute capabilit", ".x", "hopper", "00", "h20")


def may_name_arch(text: str) -> bool:
    """Can ARCH_WORD find anything in `text`? (Plain `in` tests rule out most texts; the regex,
    led by a lookbehind, is tried at every position.)"""
    if not text.isascii():
        return True
    low = text.lower()
    return any(hint in low for hint in _ARCH_HINTS)


# Products a sentence may name instead of their compute capability (the arch facts list them too).
PRODUCTS = {"h100": "9.0", "h200": "9.0", "h20": "9.0", "h800": "9.0", "gh200": "9.0", "b200": "10.0"}
PRODUCTS |= {"gb200": "10.0", "b300": "10.3", "gb300": "10.3", "hopper": "9.0"}
_NAMED = re.compile(
    r"(?<![a-z0-9])sm[_ ]?(\d{2,3})[af]?(?![0-9x])|(?<![a-z0-9])sm[_ ]?(\d{1,2})x\b"
    r"|\b(h100|h200|h20|h800|gh200|gb?200|gb?300|b200|b300|hopper)\b",
    re.I,
)


def named_archs(sentence: str) -> tuple[set[str], set[str]]:
    """The compute capabilities a sentence names ("9.0"), and the majors it names whole ("10")."""
    ccs: set[str] = set()
    majors: set[str] = set()
    for sm, family, product in _NAMED.findall(sentence):
        if sm:
            ccs.add(f"{int(sm) // 10}.{int(sm) % 10}")
        elif family:
            majors.add(family)
        else:
            ccs.add(PRODUCTS[product.lower()])
    return ccs, majors


_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(`'\"])|\n\s*\n|\n\s*[-*]\s")
_STRING = re.compile(r"""(?<![\w])[rbfuRBFU]{0,2}(["'])((?:(?!\1)[^\\\n]|\\.){12,})\1""")


def opening(lines: list[str], def_line: int) -> tuple[str, int]:
    """The docstring and the leading comments of the def or class whose header starts at
    `def_line` (1-based), and the line they start at."""
    i = def_line - 1
    end = min(len(lines), i + _OPENING_LINES)
    while i < end and not lines[i].split("#", 1)[0].rstrip().endswith(":"):
        i += 1  # the header's last line
    body: list[str] = []
    start = i + 2
    quote = ""
    for line in lines[i + 1 : end]:
        text = line.strip()
        if quote:
            body.append(text)
            if quote in text:
                break
            continue
        if text.startswith("#"):
            body.append(text.lstrip("# "))
            continue
        opener = re.match(r"[rRuU]?(\"\"\"|''')", text)
        if opener is None:
            break
        quote = opener[1]
        body.append(text[opener.end() :])
        if quote in text[opener.end() :]:
            break
    return "\n".join(body), start


def arch_sentences(text: str) -> list[str]:
    """The sentences of `text` that name an arch, each cut to a readable length."""
    if not text or not may_name_arch(text) or not ARCH_WORD.search(text):
        return []
    out = []
    for flat in _flat_sentences(text):
        hit = ARCH_WORD.search(flat) if flat else None
        if hit is not None:
            # a long sentence is cut around the arch it names, not after its first words
            start = max(0, min(hit.start() - _MAX_CHARS // 2, len(flat) - _MAX_CHARS))
            out.append(flat[start : start + _MAX_CHARS])
    return out


# A sentence saying the archs a gate leaves out were not tried, not that they cannot run it ("TODO:
# other compute capabilities may be supported but are untested"): kept beside the arch sentences
# though it names no arch (the rules read "tested" as a gate admitting what was validated).
_UNTESTED = re.compile(
    r"\buntested\b|\bnot (?:yet |been )*(?:tested|validated|verified)\b|\bmay (?:also )?be supported\b", re.I
)


def untested_sentences(text: str) -> list[str]:
    """The sentences of `text` that say what it leaves out is untested, and name no arch."""
    if not text or _UNTESTED.search(text) is None:
        return []
    flats = _flat_sentences(text)
    return [flat[:_MAX_CHARS] for flat in flats if _UNTESTED.search(flat) and not ARCH_WORD.search(flat)]


def _flat_sentences(text: str) -> Iterator[str]:
    """The sentences of a comment or docstring, `#` marks dropped and white space made single."""
    for sentence in _SENTENCE_END.split(text):
        yield " ".join(sentence.replace("#", " ").split())


# Where a sentence turns to another subject: "X supports SM100 and SM103, but rejects SM90 during
# validation" holds two clauses, and what one says (validation) is no word about the other.
_CLAUSE_END = re.compile(r";\s+|,?\s+(?:but|whereas)\s+|,\s+except\s+|\s+-{1,2}\s+", re.I)


def clauses(sentence: str) -> list[str]:
    """The clauses of a sentence, each read apart (the whole when it has one)."""
    return [part.strip() for part in _CLAUSE_END.split(sentence) if part and part.strip()]


def said(code: str) -> str:
    """The first string of a few words in `code` that names an arch (a log line, a label)."""
    if not may_name_arch(code) or not ARCH_WORD.search(code):
        return ""
    for hit in _STRING.finditer(code):
        words = hit[2]
        if len(words.split()) >= 3 and ARCH_WORD.search(words):
            return " ".join(words.split())[:_MAX_CHARS]
    return ""
