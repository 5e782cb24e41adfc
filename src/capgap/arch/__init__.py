"""GPU architecture facts and the parser for every spelling of a compute capability."""

from __future__ import annotations

from capgap.arch.facts import FEATURES, ArchFacts, all_facts, cc_key, facts_for, known_ccs, source_texts
from capgap.arch.spelling import RENAMED, ArchSpec, closest, parse_arch, try_parse_arch

__all__ = [
    "FEATURES",
    "RENAMED",
    "ArchFacts",
    "ArchSpec",
    "all_facts",
    "cc_key",
    "closest",
    "facts_for",
    "known_ccs",
    "parse_arch",
    "source_texts",
    "try_parse_arch",
]
