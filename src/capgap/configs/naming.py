"""Parse device-named tuned-config file names and spell GPU names the way each engine does.

Engines pick a tuned kernel config by building a file name from the problem shape and the GPU's
name and opening it if it exists:

    E=128,N=1856,device_name=NVIDIA_H100_80GB_HBM3.json                         (fused MoE)
    E=257,N=256,device_name=NVIDIA_H20,dtype=fp8_w8a8,block_shape=[128, 128]_down.json
    N=1536,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json  (block GEMM)
    headdim=128,dstate=256,device_name=NVIDIA_B200,cache_dtype=float16.json     (vLLM mamba)

Everything but the device name is the *shape key*: files that differ only in the device are
the same config for different GPUs. A trailing `_down` (SGLang's down-projection variant, glued
to whatever part comes last) belongs to the shape.

How each engine turns the GPU's name (`torch.cuda.get_device_name()` / NVML, e.g.
"NVIDIA RTX PRO 6000 Blackwell Server Edition") into the file's spelling:
- SGLang (`fused_moe_triton_config.get_config_file_name`): `get_device_name().replace(" ", "_")`.
- vLLM (`vllm.utils.platform_utils.get_device_name_as_file_name`): `re.sub(r"[\\s/]+", "_", name)`;
  its fused-MoE `get_config_file_name` then maps any name with an `H200` word to `NVIDIA_H200`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from capgap.errors import UsageError

DEVICE_PART = "device_name="
SHAPE_SUFFIXES = ("_down",)  # glued to the end of the stem, after the last selector

ENGINES = ("sglang", "vllm")


@dataclass(frozen=True)
class ConfigName:
    """One device-named config file name, split into shape key and device spelling."""

    before: tuple[str, ...]  # selectors before `device_name=` ("E=128", "N=1856")
    device: str  # the engine's spelling of the GPU name ("NVIDIA_H200"); may be ""
    after: tuple[str, ...]  # selectors after it ("dtype=fp8_w8a8", "block_shape=[128, 128]")
    tag: str = ""  # a glued-on suffix such as "_down"

    @property
    def key(self) -> tuple[tuple[str, ...], tuple[str, ...], str]:
        """What identifies the shape: everything but the device."""
        return (self.before, self.after, self.tag)

    @property
    def shape(self) -> str:
        """The shape key as people read it: "E=257,N=256,dtype=fp8_w8a8,down"."""
        return ",".join(self.before + self.after + ((self.tag.lstrip("_"),) if self.tag else ()))

    @property
    def dtype(self) -> str | None:
        """The `dtype=` selector's value."""
        return next((p[len("dtype=") :] for p in self.after + self.before if p.startswith("dtype=")), None)

    @property
    def block_shape(self) -> tuple[int, ...] | None:
        """The `block_shape=[N, K]` selector's numbers."""
        for part in self.after + self.before:
            if part.startswith("block_shape="):
                nums = re.findall(r"\d+", part)
                return tuple(int(n) for n in nums) or None
        return None

    def file_name(self, device: str) -> str:
        """The same shape's file name for another device spelling."""
        return ",".join(self.before + (DEVICE_PART + device,) + self.after) + self.tag + ".json"


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets (`block_shape=[128, 128]` holds a comma)."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_config_name(name: str) -> ConfigName | None:
    """Split a file name like `E=8,N=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8.json`; None if not one."""
    if not name.endswith(".json") or DEVICE_PART not in name:
        return None
    stem = name[: -len(".json")]
    tag = next((s for s in SHAPE_SUFFIXES if stem.endswith(s)), "")
    stem = stem[: len(stem) - len(tag)]
    parts = _split_top_level(stem)
    idx = next((i for i, p in enumerate(parts) if p.startswith(DEVICE_PART)), None)
    if idx is None:
        return None
    device = parts[idx][len(DEVICE_PART) :]
    return ConfigName(tuple(parts[:idx]), device, tuple(parts[idx + 1 :]), tag)


def shape_family(shape: str) -> str:
    """The shape with its plain numbers dropped: "E=128,N=1856,dtype=fp8_w8a8" -> "E,N,dtype=fp8_w8a8"."""
    return ",".join(re.sub(r"=\d+$", "", p) for p in _split_top_level(shape))


# ------------------------------------------------------------------ device spellings

_VENDOR_WORDS = {
    "nvidia": "nvidia",
    "tesla": "nvidia",
    "quadro": "nvidia",
    "geforce": "nvidia",
    "titan": "nvidia",
    "amd": "amd",
    "radeon": "amd",
    "instinct": "amd",
    "intel": "intel",
}


def vendor(device: str) -> str:
    """ "nvidia" | "amd" | "intel" | "other", from the first word of a device name (any spelling)."""
    first = re.split(r"[\s_()]+", device.strip(), maxsplit=1)[0].lower()
    return _VENDOR_WORDS.get(first, "other")


def sglang_file_name(device: str) -> str:
    return device.replace(" ", "_")


def vllm_file_name(device: str) -> str:
    return re.sub(r"[\s/]+", "_", device)


def _vllm_fused_moe_alias(spelled: str) -> str:
    return "NVIDIA_H200" if "H200" in spelled.split("_") else spelled


def engine_of(dir_path: str) -> str | None:
    """Which engine a config directory belongs to, from its path ("vllm/model_executor/..."), or None.

    The innermost engine package in the path counts (`/src/vllm/python/sglang/srt` is SGLang's).
    """
    for part in reversed(PurePosixPath(dir_path).parts):
        if part in ENGINES:
            return part
    return None


def file_spellings(device: str, dir_path: str) -> tuple[str, ...]:
    """The spelling(s) under which the engine owning `rel_dir` looks `device` up, most likely first.

    A directory of an unknown engine gets every engine's spelling (they agree for names with
    single spaces and no slash).
    """
    engine = engine_of(dir_path)
    out: list[str] = []
    if engine in (None, "sglang"):
        out.append(sglang_file_name(device))
    if engine in (None, "vllm"):
        spelled = vllm_file_name(device)
        if engine == "vllm" and PurePosixPath(dir_path).parts[-2:] == ("fused_moe", "configs"):
            spelled = _vllm_fused_moe_alias(spelled)
        out.append(spelled)
    return tuple(dict.fromkeys(out))


def device_words(name: str) -> frozenset[str]:
    """The words of a device name in any spelling, lower-case, without the vendor word "nvidia"."""
    name = re.sub(r"\(.*?\)", " ", name)  # "GB10 (DGX Spark)" -> "GB10"
    return frozenset(w for w in re.split(r"[\s_\-/]+", name.lower()) if w and w != "nvidia")


def _canonical(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("_", " ")).strip()


def normalise_device(text: str, known: Iterable[str] = ()) -> str:
    """A device name as the driver reports it, from any spelling a user types.

    `nvidia_rtx_pro_6000_blackwell_server_edition`, `RTX PRO 6000 Blackwell Server Edition` and
    `NVIDIA  RTX PRO 6000 Blackwell Server Edition` all give
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": underscores become spaces, runs of spaces
    collapse, a missing vendor word gets "NVIDIA " (what NVML reports for every current GPU).
    Then, against the names in `known` (the device spellings a tree has) and the products of
    capgap's arch facts: a name equal to one of them ignoring case takes its capitalisation; a
    name whose words are all in exactly one of them ("rtx 4090" -> "NVIDIA GeForce RTX 4090") is
    completed to it, since engines look up the full name; a name that several complete
    ("RTX PRO 6000": Server or Workstation Edition) is a UsageError listing them.
    """
    name = _canonical(text)
    if not name:
        return name
    if vendor(name) == "other":
        name = "NVIDIA " + name
    elif name.lower().startswith("nvidia "):
        name = "NVIDIA " + name[len("nvidia ") :]
    from capgap.arch import all_facts

    products = ("NVIDIA " + p for f in all_facts().values() for p in f.products if "(" not in p)
    candidates: dict[str, str] = {}
    for cand in (*known, *products):
        spelled = _canonical(cand)
        candidates.setdefault(spelled.lower(), spelled)
    if name.lower() in candidates:
        return candidates[name.lower()]
    words = device_words(name)
    wider = sorted(c for c in candidates.values() if words <= device_words(c) and vendor(c) == vendor(name))
    if len(wider) == 1:
        return wider[0]
    if wider:
        shown = ", ".join(wider[:4]) + (f" and {len(wider) - 4} more" if len(wider) > 4 else "")
        raise UsageError(f"device {text.strip()!r} could be {shown}: give the full name nvidia-smi shows")
    return name
