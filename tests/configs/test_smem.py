from __future__ import annotations

import re
from pathlib import Path

from capgap.arch import facts_for
from capgap.configs.devices import cc_for_device
from capgap.configs.smem import estimate_bytes, file_need, operand_bytes, pipeline_buffers

from .treebuild import entry

SM120 = facts_for("12.0")
SM90 = facts_for("9.0")


def test_bf16_tiles_times_stages_when_arch_unknown() -> None:
    # 4 * (64*64*2 + 64*128*2) = 4 * (8192 + 16384)
    assert estimate_bytes(entry(64, 128, 64, 4)) == 98304


def test_mma_sync_archs_keep_one_buffer_less_than_stages() -> None:
    # Triton 3.9, measured by benchmarks/configs_smem_vs_triton.py: (stages-1) buffers on sm_80/89/120
    assert pipeline_buffers(4, SM120) == 3
    assert pipeline_buffers(1, SM120) == 1
    assert pipeline_buffers(4, SM90) == 4
    assert estimate_bytes(entry(64, 128, 64, 4), None, SM120) == 73728
    assert estimate_bytes(entry(64, 128, 64, 4), None, SM90) == 98304


def test_fp8_tiles_are_one_byte() -> None:
    # SGLang's low-shared-memory fp8 default: 4 * (32*256 + 256*64) = 96 KiB
    assert estimate_bytes(entry(32, 64, 256, 4), "fp8_w8a8") == 96 * 1024


def test_weight_only_quant_has_two_byte_activations_one_byte_weights() -> None:
    assert operand_bytes("int8_w8a16") == ((2, 1), True)
    assert operand_bytes("int4_w4a16") == ((2, 1), True)
    assert estimate_bytes(entry(16, 64, 128, 2), "int4_w4a16") == 2 * (16 * 128 * 2 + 128 * 64)


def test_unknown_dtype_assumes_two_bytes_and_says_so() -> None:
    assert operand_bytes("mxfp4_new") == ((2.0, 2.0), False)
    assert file_need({"1": entry(16, 16, 16, 1)}, "mxfp4_new").dtype_known is False


def test_missing_num_stages_uses_triton_default_of_three() -> None:
    assert estimate_bytes(entry(16, 16, 16, None)) == 3 * (16 * 16 * 2 * 2)


def test_entries_without_tiles_have_no_estimate() -> None:
    assert estimate_bytes({"BLOCK_SIZE_M": 4, "num_warps": 4}) is None
    need = file_need({"triton_version": "3.6.0", "8": {"BLOCK_SIZE_M": 4, "num_warps": 4}}, None)
    assert need.bytes is None and need.entries == 0 and need.fits(99) is None


def test_file_need_is_the_largest_entry_and_fit_is_against_kb() -> None:
    data = {"1": entry(16, 32, 64, 2), "256": entry(128, 256, 64, 4), "64": entry(64, 64, 64, 3)}
    need = file_need(data, None, SM120)
    assert need.batch == "256"
    assert need.bytes == 3 * (128 * 64 * 2 + 64 * 256 * 2) == 147456
    assert need.fits(99) is False  # 99 KB = 101376 bytes
    assert need.fits(227) is True
    assert file_need(data, None, SM90).bytes == 4 * (128 * 64 * 2 + 64 * 256 * 2)


def test_device_names_map_to_compute_capabilities() -> None:
    assert cc_for_device("NVIDIA_H100_80GB_HBM3") == "9.0"
    assert cc_for_device("NVIDIA_H20-3e") == "9.0"
    assert cc_for_device("NVIDIA_A100-SXM4-80GB") == "8.0"
    assert cc_for_device("NVIDIA_B300_SXM6_AC") == "10.3"
    assert cc_for_device("NVIDIA RTX PRO 6000 Blackwell Server Edition") == "12.0"
    assert cc_for_device("NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition") == "12.0"
    assert cc_for_device("NVIDIA_RTX_6000_Ada_Generation") == "8.9"
    assert cc_for_device("NVIDIA_GB10") == "12.1"
    assert cc_for_device("NVIDIA_L20Y") is None  # not in the facts: no guess


def test_estimate_matches_what_triton_allocates_offline() -> None:
    # benchmarks/results/configs_smem_triton.txt: Triton 3.9 compiled the engines' loop shape for
    # sm_80/89/90/100/120; columns: cc dtype M N K stages triton_bytes estimate ratio upper
    results = Path(__file__).resolve().parents[2] / "benchmarks/results/configs_smem_triton.txt"
    rows = [line.split() for line in results.read_text().splitlines()[2:]]
    assert len(rows) == 84
    for cc, dtype, bm, bn, bk, stages, triton_bytes, *_ in rows:
        arch = facts_for(f"{int(cc) // 10}.{int(cc) % 10}")
        est = estimate_bytes(
            entry(int(bm), int(bn), int(bk), int(stages)), None if dtype == "-" else dtype, arch
        )
        assert est is not None
        if cc == "90" and dtype == "fp8_w8a8" and int(bm) >= 64:
            assert est >= int(
                triton_bytes
            )  # Hopper's fp8 wgmma path allocates less: the estimate stays above
        else:
            assert 0 <= int(triton_bytes) - est <= 16, (
                cc,
                dtype,
                bm,
                bn,
                bk,
                stages,
            )  # sm_100: 16 B of barriers


def test_small_block_m_uses_mma_sync_even_on_hopper() -> None:
    assert pipeline_buffers(4, SM90, block_m=16) == 3
    assert pipeline_buffers(4, SM90, block_m=64) == 4
    # converted int8 weights on wgmma keep one more B tile: 3*(256*128*2 + 128*128) + 128*128
    assert estimate_bytes(entry(256, 128, 128, 3), "int8_w8a16", SM90) == 262144
    assert estimate_bytes(entry(16, 128, 256, 4), "fp8_w8a8", SM120, k_cap=128) == 3 * (16 * 128 + 128 * 128)


def test_estimate_matches_what_triton_did_on_an_h200() -> None:
    # benchmarks/results/configs_smem_h200.txt: real launches on an H200 (Triton 3.6), one line per
    # config: "BM BN BK stages shared <bytes> ran True" or "... OutOfResources ... Required: <bytes>, ..."
    results = Path(__file__).resolve().parents[2] / "benchmarks/results/configs_smem_h200.txt"
    lines = results.read_text().splitlines()
    assert lines[0].startswith("NVIDIA H200 9 0 optin 232448")
    limit = SM90.smem_per_block_kb * 1024
    assert limit == 232448
    for line in lines[1:]:
        bm, bn, bk, stages = (int(x) for x in line.split()[:4])
        found = re.search(r"shared (\d+) ran True|Required: (\d+),", line)
        assert found is not None, line
        triton_bytes = int(found.group(1) or found.group(2))
        est = estimate_bytes(entry(bm, bn, bk, stages), None, SM90)
        assert est == triton_bytes, line
        assert (est <= limit) == ("ran True" in line), line
    assert len(lines) == 11
