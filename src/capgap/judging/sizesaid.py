"""The shared memory a comment says a launch value needs: "BLOCK_T=128 needs 122,880 bytes of shared
memory" (vllm-omni's MAGI-2 head MoE, under `if major >= 10: return (128, 64, 32, 2, 8)`), "sm_121
caps shared memory at 99 KB per block and num_stages=4 needs 108 KB" (sglang's Inkling MoE, above
`"num_stages": 3 if is_sm121() else 4`). A decision that gives that value to a GPU whose blocks get
less launches what its own authors say does not fit there: Triton raises OutOfResources
(rules.gate_admits_unsupported).

Read only as `NAME=N needs SIZE` with a shared-memory word (shared memory, smem, SRAM) in the same
sentence: a size stated for a setting the decision picks, not an estimate of capgap's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STATED = re.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\d+)\b[^.;]{0,80}?\bneeds?\s+(?:about\s+|~\s*)?"
    r"(?P<size>\d[\d,]*)\s*(?P<unit>bytes|B|KB|KiB)(?![\w])",
    re.I,
)
_SMEM = re.compile(r"shared[ _-]?mem|\bsmem\b|\bsram\b", re.I)
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")
_MAX_TEXT = 4000


@dataclass(frozen=True)
class SizeSaid:
    """`num_stages=4 needs 108 KB`: the setting, its value, the bytes the words give it, the sentence."""

    name: str
    value: int
    nbytes: int
    sentence: str


def stated(text: str) -> tuple[SizeSaid, ...]:
    """The shared-memory sizes the comments in `text` state for a setting's value."""
    if not text or not _SMEM.search(text):
        return ()
    flat = " ".join(text[:_MAX_TEXT].replace("#", " ").split())
    out: list[SizeSaid] = []
    for sentence in _SENTENCES.split(flat):
        if not _SMEM.search(sentence):
            continue
        for hit in _STATED.finditer(sentence):
            size = int(hit["size"].replace(",", ""))
            nbytes = size * 1024 if hit["unit"].lower() in ("kb", "kib") else size
            out.append(SizeSaid(hit["name"], int(hit["value"]), nbytes, sentence[:200]))
    return tuple(out)


def gives(summary: str, value: int) -> bool:
    """Does an arm's summary give the number (`returns (128, 64, 32, 2, 8)`, `gives 4`)?"""
    return re.search(rf"(?<![\w.]){value}(?![\w.])", summary) is not None
