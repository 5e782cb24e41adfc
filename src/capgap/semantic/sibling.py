"""Which present arch to copy a missing entry from, when nothing was measured.

The rule, in order:
1. the closest arch of the same family (12.1 copies 12.0; 10.3 copies 10.0), older on a tie;
2. else the older arch sharing the most features that matter to the table, the newest on a tie.
   Communication tables (all-reduce, symmetric memory, multimem, NCCL, world sizes) care about
   the interconnect: nvlink, nvswitch, nvls_multicast. Every other table cares about the compute
   features: wgmma, tcgen05, tma, clusters, fp8/fp4 tensor cores, shared memory per block; there,
   an arch with no more shared memory per block than the target wins first (a kernel config
   tuned for 227 KB does not launch in 99 KB, one tuned for 99 KB does);
3. else (only newer archs present) the closest newer one.
`--like ARCH` overrides the rule.
"""

from __future__ import annotations

import re

from capgap.arch import FEATURES, ArchFacts, ArchSpec

_COMM = re.compile(r"all_?reduce|symm|multimem|nccl|nvls|world|comm|custom_ar|_ar_|p2p", re.I)
COMM_FEATURES = ("nvlink", "nvswitch", "nvls_multicast")
COMPUTE_FEATURES = (*FEATURES, "smem_per_block_kb")


def relevant_features(symbol: str) -> tuple[str, ...]:
    return COMM_FEATURES if _COMM.search(symbol) else COMPUTE_FEATURES


def _shared(a: ArchFacts, b: ArchFacts, features: tuple[str, ...]) -> int:
    return sum(getattr(a, f) == getattr(b, f) for f in features)


def choose_sibling(target: ArchSpec, present: list[ArchSpec], symbol: str) -> tuple[ArchSpec, str] | None:
    """The arch to copy from, and the reason in words; None when the table has no arch key."""
    if not present:
        return None
    tf = target.facts
    same_family = [p for p in present if p.facts.family == tf.family and p.cc != target.cc]
    if same_family:
        best = min(same_family, key=lambda p: (abs(p.number - target.number), p.number))
        return best, f"closest arch of the same family ({tf.family})"
    features = relevant_features(symbol)
    older = [p for p in present if p.number < target.number]
    if older:

        def rank(p: ArchSpec) -> tuple[bool, int, int]:
            fits = features is COMM_FEATURES or p.facts.smem_per_block_kb <= tf.smem_per_block_kb
            return (fits, _shared(p.facts, tf, features), p.number)

        best = max(older, key=rank)
        n = _shared(best.facts, tf, features)
        fits = "" if features is COMM_FEATURES else ", smem per block fitting first"
        return best, f"older arch sharing the most of {', '.join(features)} ({n} of {len(features)}{fits})"
    best = min(present, key=lambda p: p.number)
    return best, "closest newer arch (no older one in the table)"
