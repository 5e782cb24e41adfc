"""Which part of an engine a finding is about (communication, attention, GEMM, MoE, quantization,
build), read from the words of its path, symbol, message and evidence, so the report can say
"your all-reduce" rather than a file name.

Each place scores words by how much they say: the table's or gate's own name and the file's name
most, the enclosing directories less (the nearest more than the top), the message and evidence
least. Words, not file names: `layers/moe/cutlass_moe.py`, `jit/cake_bgmv_moe.py` and
`ep_dispatch_MoE.py` all read MoE; a table of `NVCC_FLAGS` in an attention kernel's JIT module is a
build gap (the kernel is not compiled for the arch) before it is an attention one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from capgap.findings import Finding

SUBSYSTEMS = ("communication", "attention", "GEMM", "MoE", "quantization", "build", "other")
_BUILD_RULES = {"build-missing-arch"}
_BINARY_RULE = "binary-missing-arch"  # a library built without the arch: build, unless its name says more

# Matched against words joined by "_" (camelCase and punctuation split), so `AllReduce`,
# `all_reduce` and `allreduce` read alike; (?<![a-z]) keeps `comm` out of `common`/`command`.
_WORDS: dict[str, str] = {
    "communication": r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|all2all|a2a|nccl|nvshmem"
    r"|multimem|symm_?mem|custom_?ar|(?<![a-z])comm(?![a-z])|communicat\w*|distributed|deep_?ep"
    r"|mooncake|nvls|mnnvl|(?<![a-z])p2p|(?<![a-z])ipc(?![a-z])|collective|dispatch_combine",
    "attention": r"attention|attn|(?<![a-z])mla(?![a-z])|(?<![a-z])mha(?![a-z])|(?<![a-z])gqa|"
    r"(?<![a-z])mqa|fmha|flash_?mla|flash_?infer_?mla|sdpa|(?<![a-z])fa[234](?![a-z0-9])"
    r"|(?<![a-z])(?:fla|kda|gdn|dsa|nsa|msa|vsa)(?![a-z])|(?<![a-z])rope|rotary|paged_kv|kv_?cache"
    r"|mem_?cache|sparse_?mqa",
    "GEMM": r"gemm|gemv|bgmv|(?<![a-z])b?mm(?![a-z])|scaled_mm|matmul|cublas|(?<![a-z])linear(?![a-z])"
    r"|lm_?head|(?<![a-z])mma(?![a-z])|wgmma|projection",
    "MoE": r"moe|expert|(?<![a-z])router|routing|(?<![a-z])topk_?(?:reduce|softmax|gating)|gating_?net"
    r"|megamoe|fused_?experts",
    "quantization": r"quant|fp8|fp4|fp6|mxfp|nvfp|(?<![a-z])int[48](?![0-9])|w8a8|w4a16|w4a8|awq|gptq"
    r"|marlin|modelopt|compressed_?tensors|bitsandbytes|gguf|(?<![a-z])e4m3|(?<![a-z])e5m2",
    "build": r"nvcc|gencode|cmake|(?<![a-z])setup(?![a-z])|arch_?list|cuda_?arch|(?<![a-z])c?(?:xx)?flags?"
    r"(?![a-z])|ptxas|cubin|fatbin",
}
_PATTERNS = {name: re.compile(rx) for name, rx in _WORDS.items()}
# the place a word is found -> how much it says
_SYMBOL, _STEM, _NEAR_DIR, _DIR, _TEXT = 4, 3, 2, 1, 1
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")


def words(text: str) -> str:
    """`SymmMemCommunicator._WORLD_SIZES` -> `symm_mem_communicator_world_sizes`, then the text
    with only its punctuation split (`FusedMoE` splits into `fused_mo_e`, its whole is `fusedmoe`)."""
    split = _NON_WORD.sub("_", _CAMEL.sub("_", text).lower()).strip("_")
    whole = _NON_WORD.sub("_", text.lower()).strip("_")
    return split if split == whole else f"{split} {whole}"


def _places(f: Finding) -> Iterable[tuple[str, int]]:
    parts = f.path.replace("\\", "/").split("/")
    dirs, name = parts[:-1], parts[-1]
    yield words(f.symbol), _SYMBOL
    yield words(name.rsplit(".", 1)[0] if "." in name else name), _STEM
    for i, part in enumerate(reversed(dirs[1:] if len(dirs) > 1 else dirs)):  # the top is the package
        yield words(part), _NEAR_DIR if i == 0 else _DIR
    extra = f.extra or {}
    yield words(str(extra.get("context", ""))), _TEXT
    yield words(f.message), _TEXT
    evidence = extra.get("evidence")
    if evidence:
        yield words(str(evidence)), _TEXT


def scores(f: Finding) -> dict[str, tuple[int, int]]:
    """subsystem -> (summed weight of the places naming it, the weight of the best such place)."""
    total, top = dict.fromkeys(_PATTERNS, 0), dict.fromkeys(_PATTERNS, 0)
    for text, weight in _places(f):
        if not text:
            continue
        for name, rx in _PATTERNS.items():
            if rx.search(text):
                total[name] += weight
                top[name] = max(top[name], weight)
    return {name: (total[name], top[name]) for name in _PATTERNS}


def subsystem(f: Finding) -> str:
    """One of SUBSYSTEMS; a tie goes to the one named in the weightier place, then to the earlier."""
    if f.rule in _BUILD_RULES:
        return "build"
    got = scores(f)
    best = max(got.values())
    if best[0] == 0:
        return "build" if f.rule == _BINARY_RULE else "other"
    return next(name for name in SUBSYSTEMS if got.get(name) == best)
