"""The literal tokens of the byte pre-filter, apart from its regular expressions: grep's pre-pass
builds its pattern from them before `re` (~10 ms to import) has loaded."""

from __future__ import annotations

# Any one of these (in the lowercased bytes) makes a file or statement worth parsing.
CAP_TOKENS = (
    b"apabilit",
    b"lackwell",
    b"hopper",
    b"device_sm",
    b"rch_list",
    b"cuda_arch",
    b"sm_version",
    b"gencode",
)
# A module that asks the GPU's properties (`props = torch.cuda.get_device_properties(0)`, then
# `props.major >= 9`) tests its capability without naming it: worth parsing where `major` is a word.
PROPERTY_TOKENS = (b"device_properties",)
# Dict entries keyed like a compute capability: `9: `, `10: `, `"9.0": `, `(9, 0): `, `"sm_90": `,
# and `90: ` / `100: ` (vLLM's `capability.to_int()` keys).
CC_KEY_TOKENS = (b"9: ", b"10: ", b'.0": ', b".0': ", b", 0): ", b"90: ", b"100: ")

# What a kernel module spells, though it tests no capability: an arch-specific instruction set it
# imports, or a kernel it defines. Such a module is read for what its callers run (judging.callees).
# Or a kernel library whose kernels need such a set (judging.libraries): DeepGEMM, FlashMLA, HPC-Ops.
KERNEL_TOKENS = (
    b"tcgen05",
    b"wgmma",
    b"warpgroup",
    b"multimem",
    b"multicast",
    b"cute.kernel",
    b"triton.jit",
    b"deep_gemm",
    b"flash_mla",
    b"import hpc",
)

# What a backend registered by name and the module it runs spell, though neither tests a capability
# (judging.named): a decorator registering under a name, and kernel families' names. Extended regexes
# (grep -Ei), matched again exactly in Python.
BACKEND_PATTERNS = (
    "@[a-z_.]*register[a-z_]*\\(",
    "trtllm_?gen",
    "deep_?gemm",
    "flash_?mla",
    "fa3",
    "cutlass_mla",
    "nvls",
)
# A native source a JIT module names in a string (`cuda_files=["deepseek_v4/wo_a_fused.cuh"]`): what
# it compiles is what its callers run (reading.fileparse._jit_module, reading.native). Extended regex.
SOURCE_PATTERNS = ("\\.cuh?[\"']",)
