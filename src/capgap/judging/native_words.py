"""What a native source's words say it needs: the instructions that tie a kernel to an arch.

`reading.native` finds the words in the `.cu` / `.cuh` / `.ptx` sources a module compiles; which
words count, in which order, and what each one means are judgments, kept here.
"""

from __future__ import annotations

import re

# Tiers, tried in order: the first tier whose words a source spells is what it needs.
# 1. Arch-specific instructions (library names are not enough here).
_NEEDS = re.compile(rb"tcgen05|\bumma\b|\btmem\b|tmem_|wgmma|warpgroup|multimem")
_NEED_WORDS = ("tcgen05", "umma", "tmem", "wgmma", "warpgroup", "multimem")
# 2. Instructions built for the SM100 family alone (arch.facts DERIVED), read where none of the above
# is spelled: `redux.sync.max.f32` (FlashInfer's Cake softmax, its MoE router), `cvt.rs` (stochastic
# rounding).
_SM100_ONLY_NEEDS = re.compile(rb"redux\.sync\.(?:min|max)[.a-z0-9]*\.f32|cvt\.rs\.")
_SM100_ONLY_WORDS = ("redux.sync.", "cvt.rs.")
# 3. Hopper-generation features, read only where none of the above is spelled (a tcgen05 kernel
# launched with cluster dimensions needs tcgen05 first): thread-block clusters and TMA's bulk
# copies. They tell what a GPU from before 9.0 lacks (an Ada), never what a Blackwell does.
# (in PTX, or as libcu++ spells it: `cuda::ptx::cp_async_bulk(...)`, `barrier_cluster_arrive()`)
_SM90_NEEDS = re.compile(rb"__cluster_dims__|barrier[._]cluster|cp[._]async[._]bulk")
_SM90_WORDS = ("__cluster_dims__", "barrier.cluster", "barrier_cluster", "cp.async.bulk", "cp_async_bulk")

# (the plain words a lower-cased source must hold for the tier's pattern to be tried, the pattern);
# every match of a pattern starts with one of its words.
TIERS: tuple[tuple[tuple[str, ...], re.Pattern[bytes]], ...] = (
    (_NEED_WORDS, _NEEDS),
    (_SM100_ONLY_WORDS, _SM100_ONLY_NEEDS),
    (_SM90_WORDS, _SM90_NEEDS),
)

# Each spelling's feature (`TMEM_NCOLS`: the `tmem_` spelling, which the name readers of
# `evidence` do not take for TMEM, so the mapping is direct).
_FEATURE: dict[str, tuple[str, ...]] = {
    "tcgen05": ("tcgen05",),
    "umma": ("tcgen05",),
    "tmem": ("tcgen05",),
    "wgmma": ("wgmma",),
    "warpgroup": ("wgmma",),
    "multimem": ("nvls_multicast",),
    "__cluster_dims": ("clusters",),
    "barrier.cluster": ("clusters",),
    "barrier_cluster": ("clusters",),
    "cp.async.bulk": ("tma",),
    "cp_async_bulk": ("tma",),
    "redux": ("redux_f32",),  # `redux.sync.max.f32` (an integer `redux.sync` is no match of the regex)
    "cvt": ("cvt_rs",),  # `cvt.rs.`
}


def feature(word: str) -> tuple[str, ...]:
    """The need of a spelling a tier matched: the word itself, or an instruction by its first part
    (`redux.sync.max.f32` -> `redux`)."""
    word = word.lower().rstrip("_")
    return _FEATURE.get(word) or _FEATURE[word.split(".")[0]]
