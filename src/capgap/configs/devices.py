"""Which compute capability a GPU name (in any engine's spelling) has.

Matched against the products of capgap's arch facts (`capgap/arch/facts.toml`, source: NVIDIA's
CUDA GPUs list) by words: a product matches when all its words appear in the device name
("H100" in "NVIDIA_H100_80GB_HBM3", "RTX PRO 6000 Blackwell Workstation Edition" in
"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"); the product with the most words wins
and a tie between two ccs gives no answer. `_EXTRA` adds names that engines ship configs for but
the facts do not list as products (same source).
"""

from __future__ import annotations

from functools import lru_cache

from capgap.arch import ArchFacts, all_facts
from capgap.configs.naming import device_words

_EXTRA = {  # product words -> cc (developer.nvidia.com/cuda-gpus)
    "L20": "8.9",
    "RTX 5880 Ada": "8.9",
    "RTX 5000 Ada": "8.9",
    "RTX 4500 Ada": "8.9",
    "RTX 4000 Ada": "8.9",
}


@lru_cache(maxsize=1)
def _products() -> tuple[tuple[frozenset[str], str], ...]:
    rows = [(device_words(p), cc) for cc, f in all_facts().items() for p in f.products]
    rows += [(device_words(p), cc) for p, cc in _EXTRA.items()]
    return tuple(r for r in rows if r[0])


@lru_cache(maxsize=256)
def cc_for_device(device: str) -> str | None:
    """The cc of a device: "9.0" for NVIDIA_H100_80GB_HBM3, "12.0" for an RTX PRO 6000 Blackwell."""
    words = device_words(device)
    best: dict[str, int] = {}
    for product, cc in _products():
        if product <= words:
            best[cc] = max(best.get(cc, 0), len(product))
    if not best:
        return None
    top = max(best.values())
    winners = [cc for cc, n in best.items() if n == top]
    return winners[0] if len(winners) == 1 else None


def facts_for_device(device: str) -> ArchFacts | None:
    cc = cc_for_device(device)
    return all_facts()[cc] if cc else None
