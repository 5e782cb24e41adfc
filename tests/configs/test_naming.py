from __future__ import annotations

import pytest

from capgap.configs.naming import (
    engine_of,
    file_spellings,
    normalise_device,
    parse_config_name,
    shape_family,
    vendor,
)
from capgap.errors import UsageError


@pytest.mark.parametrize(
    ("name", "device", "shape"),
    [
        ("E=128,N=1856,device_name=NVIDIA_H100_80GB_HBM3.json", "NVIDIA_H100_80GB_HBM3", "E=128,N=1856"),
        (
            "E=257,N=256,device_name=NVIDIA_H20,dtype=fp8_w8a8,block_shape=[128, 128]_down.json",
            "NVIDIA_H20",
            "E=257,N=256,dtype=fp8_w8a8,block_shape=[128, 128],down",
        ),
        ("E=512,N=64,device_name=NVIDIA_H200_down.json", "NVIDIA_H200", "E=512,N=64,down"),
        (
            "N=1536,K=7168,device_name=NVIDIA_A100-SXM4-80GB,dtype=int8_w8a8,block_shape=[128,128].json",
            "NVIDIA_A100-SXM4-80GB",
            "N=1536,K=7168,dtype=int8_w8a8,block_shape=[128,128]",
        ),
        (
            "headdim=128,dstate=256,device_name=Intel(R)_Arc(TM)_Pro_B60_Graphics,cache_dtype=float16.json",
            "Intel(R)_Arc(TM)_Pro_B60_Graphics",
            "headdim=128,dstate=256,cache_dtype=float16",
        ),
        ("strategy,E=896,topk=16,device_name=NVIDIA_GB300.json", "NVIDIA_GB300", "strategy,E=896,topk=16"),
    ],
)
def test_parse_splits_device_from_shape_and_round_trips(name: str, device: str, shape: str) -> None:
    parsed = parse_config_name(name)
    assert parsed is not None
    assert parsed.device == device
    assert parsed.shape == shape
    assert parsed.file_name(device) == name


def test_same_shape_for_different_devices_has_one_key() -> None:
    a = parse_config_name("E=8,N=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8.json")
    b = parse_config_name("E=8,N=7168,device_name=NVIDIA_B200,dtype=fp8_w8a8.json")
    c = parse_config_name("E=8,N=7168,device_name=NVIDIA_B200,dtype=fp8_w8a8_down.json")
    assert a and b and c
    assert a.key == b.key != c.key
    assert a.dtype == c.dtype == "fp8_w8a8"
    assert b.file_name("NVIDIA_X") == "E=8,N=7168,device_name=NVIDIA_X,dtype=fp8_w8a8.json"


@pytest.mark.parametrize("name", ["README.md", "E=8,N=7168.json", "device_name=NVIDIA_H200.txt"])
def test_other_files_are_not_configs(name: str) -> None:
    assert parse_config_name(name) is None


def test_shape_family_drops_plain_numbers_only() -> None:
    assert shape_family("E=257,N=256,dtype=fp8_w8a8,block_shape=[128, 128],down") == (
        "E,N,dtype=fp8_w8a8,block_shape=[128, 128],down"
    )
    assert shape_family("provider=cutedsl_fp8_masked,E=256,K=2048") == "provider=cutedsl_fp8_masked,E,K"


def test_engine_spellings_match_each_engines_rule() -> None:
    name = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    want = "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
    assert file_spellings(name, "sglang/srt/layers/moe/configs/triton_3_4_0") == (want,)
    assert file_spellings(name, "vllm/model_executor/layers/quantization/utils/configs") == (want,)
    # SGLang replaces single spaces only; vLLM collapses whitespace runs and slashes
    odd = "NVIDIA  A/B"
    assert file_spellings(odd, "sglang/x") == ("NVIDIA__A/B",)
    assert file_spellings(odd, "vllm/x") == ("NVIDIA_A_B",)
    assert file_spellings(odd, "elsewhere") == ("NVIDIA__A/B", "NVIDIA_A_B")


def test_vllm_fused_moe_maps_every_h200_to_nvidia_h200() -> None:
    assert file_spellings("NVIDIA H200 NVL", "vllm/model_executor/layers/fused_moe/configs") == (
        "NVIDIA_H200",
    )
    assert file_spellings("NVIDIA H200 NVL", "vllm/model_executor/layers/quantization/utils/configs") == (
        "NVIDIA_H200_NVL",
    )
    assert file_spellings("NVIDIA H200 NVL", "sglang/srt/configs") == ("NVIDIA_H200_NVL",)


def test_engine_of_reads_the_package_in_the_path() -> None:
    assert engine_of("python/sglang/srt/layers") == "sglang"
    assert engine_of("vllm/model_executor") == "vllm"
    assert engine_of("mypkg/configs") is None
    assert engine_of("/src/vllm/python/sglang/srt/configs") == "sglang"  # the innermost package


@pytest.mark.parametrize(
    "typed",
    [
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition",
        "nvidia rtx pro 6000 blackwell server edition",
        "RTX PRO 6000 Blackwell Server Edition",
        "  NVIDIA   RTX PRO 6000  Blackwell Server Edition ",
    ],
)
def test_user_spellings_normalise_to_the_driver_name(typed: str) -> None:
    assert normalise_device(typed) == "NVIDIA RTX PRO 6000 Blackwell Server Edition"


def test_normalise_takes_capitalisation_from_known_names() -> None:
    assert normalise_device("nvidia_h100_80gb_hbm3", ("NVIDIA_H100_80GB_HBM3",)) == "NVIDIA H100 80GB HBM3"
    assert normalise_device("AMD Instinct MI300X") == "AMD Instinct MI300X"


def test_vendor() -> None:
    assert vendor("NVIDIA_H200") == "nvidia"
    assert vendor("AMD_Instinct_MI300X") == "amd"
    assert vendor("Intel(R)_Arc(TM)_Pro_B60_Graphics") == "intel"
    assert vendor("Radeon_8060S_Graphics") == "amd"


def test_partial_names_complete_to_the_one_full_name() -> None:
    assert normalise_device("rtx 4090") == "NVIDIA GeForce RTX 4090"
    assert (
        normalise_device("h100 hbm3", ("NVIDIA_H100_80GB_HBM3", "NVIDIA_H100_PCIe"))
        == "NVIDIA H100 80GB HBM3"
    )
    assert normalise_device("H100", ("NVIDIA_H100_80GB_HBM3",)) == "NVIDIA H100"  # a product name itself
    assert normalise_device("NVIDIA Mystery 9000") == "NVIDIA Mystery 9000"  # unknown: kept as typed


def test_a_partial_name_several_gpus_complete_is_refused() -> None:
    with pytest.raises(
        UsageError, match="could be NVIDIA RTX PRO 6000 Blackwell Server Edition, NVIDIA RTX PRO"
    ):
        normalise_device("RTX PRO 6000")
