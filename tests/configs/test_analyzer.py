from __future__ import annotations

from pathlib import Path

from capgap.arch import parse_arch
from capgap.configs.analyzer import analyze
from capgap.configs.report import show_config_findings
from capgap.scan.analyzers import ScanOptions
from capgap.targets import resolve_target

from .treebuild import entry, write_config

RTX = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
RTX_FILE = "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
MOE = "sglang/srt/layers/moe/configs/triton_3_4_0"
BIG = {"1": entry(16, 64, 64, 2), "512": entry(128, 256, 64, 4)}  # 144 KB on sm_120: does not fit
SMALL = {"1": entry(16, 64, 64, 2), "512": entry(64, 128, 64, 3)}  # 48 KB on sm_120


def _tree(root: Path) -> Path:
    moe = root / MOE
    write_config(moe, "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json", BIG)
    write_config(moe, "E=8,N=7168,device_name=NVIDIA_A100-SXM4-80GB.json", SMALL)
    write_config(moe, f"E=8,N=7168,device_name={RTX_FILE}.json", SMALL)
    write_config(moe, "E=16,N=1024,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8.json", BIG)
    write_config(moe, "E=16,N=1024,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8_down.json", SMALL)
    write_config(moe, "E=64,N=512,device_name=NVIDIA_B200.json", BIG)
    write_config(moe, "E=64,N=512,device_name=NVIDIA_L40S.json", SMALL)
    write_config(moe, "E=96,N=512,device_name=AMD_Instinct_MI300X.json", SMALL)  # not a sibling
    (moe / "README.md").write_text("not a config")
    # a directory the RTX board covers fully, and one without any NVIDIA sibling
    write_config(root / "pkg/full", f"N=1,K=2,device_name={RTX_FILE}.json")
    write_config(root / "pkg/full", "N=1,K=2,device_name=NVIDIA_H200.json")
    write_config(root / "pkg/amd_only", "N=1,K=2,device_name=AMD_Instinct_MI300X.json")
    return root


def _scan(root: Path, *devices: str, archs: tuple[str, ...] = ()):
    opts = ScanOptions(archs=tuple(parse_arch(a) for a in archs), devices=devices)
    return analyze(resolve_target(str(root)), opts)


def test_no_device_means_no_findings(tmp_path: Path) -> None:
    result = _scan(_tree(tmp_path))
    assert result.findings == [] and result.files == 0


def test_one_finding_per_directory_with_gaps(tmp_path: Path) -> None:
    result = _scan(_tree(tmp_path), "rtx pro 6000 blackwell server edition")
    assert result.files == 11
    assert [f.symbol for f in result.findings] == [MOE]
    f = result.findings[0]
    assert (f.rule, f.severity, f.path, f.missing, f.arch) == (
        "config-missing-device",
        "medium",
        MOE,
        RTX_FILE,
        "12.0",
    )
    assert f.present == ("NVIDIA_A100-SXM4-80GB", "NVIDIA_B200", "NVIDIA_H100_80GB_HBM3", "NVIDIA_L40S")
    assert "default kernel config" in f.consequence
    assert f.extra["shapes"] == 4
    assert f.extra["target_has"] == 1
    assert f.extra["missing_count"] == 3
    assert f.extra["missing_examples"] == [
        "E=16,N=1024,dtype=fp8_w8a8",
        "E=16,N=1024,dtype=fp8_w8a8,down",
        "E=64,N=512",
    ]
    assert f.extra["missing_by_device"] == {"NVIDIA_H100_80GB_HBM3": 2, "NVIDIA_B200": 1, "NVIDIA_L40S": 1}
    assert f.extra["families"] == [
        {"family": "E,N", "target_has": 1, "siblings_have": 2},
        {"family": "E,N,dtype=fp8_w8a8", "target_has": 0, "siblings_have": 1},
        {"family": "E,N,dtype=fp8_w8a8,down", "target_has": 0, "siblings_have": 1},
    ]
    # fp8 BIG on sm_120: 3 * (128*64 + 64*256) = 72 KB fits; bf16 BIG from B200 (144 KB) does not
    assert f.extra["smem_limit_kb"] == 99
    assert f.extra["smem_unfit_by_device"] == {"NVIDIA_B200": 1}
    assert f.extra["smem_unfit_examples"] == [
        {
            "shape": "E=64,N=512",
            "device": "NVIDIA_B200",
            "need_kb": 144.0,
            "limit_kb": 99,
            "file": f"{MOE}/E=64,N=512,device_name=NVIDIA_B200.json",
        }
    ]
    assert f.extra["copyable"] == 3  # E=64,N=512 still has L40S, which fits


def test_no_finding_where_the_device_has_every_shape(tmp_path: Path) -> None:
    _tree(tmp_path)
    write_config(tmp_path / MOE, "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8.json")
    result = _scan(tmp_path, "NVIDIA H100 80GB HBM3")
    assert [(f.symbol, f.missing, f.extra["missing_count"]) for f in result.findings] == [
        ("pkg/full", "NVIDIA_H100_80GB_HBM3", 1),
        (MOE, "NVIDIA_H100_80GB_HBM3", 1),  # E=64,N=512 only B200/L40S have
    ]
    assert [f.symbol for f in _scan(tmp_path, "NVIDIA H200").findings] == [MOE]


def test_several_devices_each_get_their_findings_and_duplicates_count_once(tmp_path: Path) -> None:
    result = _scan(_tree(tmp_path), RTX, RTX, "NVIDIA_L40S")
    assert [(f.missing, f.arch) for f in result.findings] == [
        (RTX_FILE, "12.0"),
        ("NVIDIA_L40S", "8.9"),
        ("NVIDIA_L40S", "8.9"),
    ]


def test_unknown_device_takes_arch_from_options_or_reports_no_limit(tmp_path: Path) -> None:
    _tree(tmp_path)
    (f,) = [f for f in _scan(tmp_path, "NVIDIA Mystery 9000").findings if f.symbol == MOE]
    assert f.arch == "" and f.extra["smem_limit_kb"] is None and f.extra["copyable"] is None
    (g,) = [f for f in _scan(tmp_path, "NVIDIA Mystery 9000", archs=("sm_90",)).findings if f.symbol == MOE]
    assert g.arch == "9.0" and g.extra["smem_limit_kb"] == 227 and g.extra["smem_unfit_by_device"] == {}


def test_text_table_shows_families(tmp_path: Path, capsys) -> None:
    result = _scan(_tree(tmp_path), RTX)
    show_config_findings(result.findings)
    out = " ".join(capsys.readouterr().out.split())  # rich wraps at the test console's width
    assert f"{MOE}: {RTX_FILE} (cc 12.0) lacks 3 of 4 shapes" in out
    assert "E,N,dtype=fp8_w8a8,down" in out
    assert "would not fit 99 KB per block (out of resource: shared memory): NVIDIA_B200 (1)" in out


def test_sglang_triton_version_dirs_count_shapes_the_device_has_in_another_version(tmp_path: Path) -> None:
    base = tmp_path / "sglang/srt/layers/moe/configs"
    write_config(base / "triton_3_4_0", "E=8,N=16,device_name=NVIDIA_H200.json")
    write_config(base / "triton_3_4_0", "E=8,N=32,device_name=NVIDIA_H200.json")
    write_config(base / "triton_3_5_1", f"E=8,N=16,device_name={RTX_FILE}.json")
    write_config(tmp_path / "vllm/configs", "E=8,N=16,device_name=NVIDIA_H200.json")
    result = _scan(tmp_path, RTX)
    by_dir = {f.symbol: f.extra.get("in_other_triton_dirs") for f in result.findings}
    assert by_dir == {"sglang/srt/layers/moe/configs/triton_3_4_0": 1, "vllm/configs": None}


def test_siblings_are_gpus_of_the_targets_vendor(tmp_path: Path) -> None:
    _tree(tmp_path)
    write_config(tmp_path / MOE, "E=64,N=512,device_name=AMD_Instinct_MI325X.json")
    (f,) = _scan(tmp_path, "AMD Instinct MI300X").findings
    assert (f.symbol, f.missing, f.present) == (MOE, "AMD_Instinct_MI300X", ("AMD_Instinct_MI325X",))
    assert f.extra["missing_examples"] == ["E=64,N=512"] and f.arch == ""
    assert f.message.startswith("1 of 2 tuned config shapes have a file for another AMD GPU")


def test_an_ambiguous_device_is_a_usage_error(tmp_path: Path) -> None:
    import pytest

    from capgap.errors import UsageError

    with pytest.raises(UsageError, match="give the full name"):
        _scan(_tree(tmp_path), "RTX PRO 6000")


def test_an_unreadable_sibling_file_is_skipped_and_never_copied(tmp_path: Path) -> None:
    _tree(tmp_path)
    broken = tmp_path / MOE / "E=64,N=512,device_name=NVIDIA_L40S.json"
    broken.write_text("{not json")
    result = _scan(tmp_path, RTX, "NVIDIA L4")
    assert [(s.path, s.reason) for s in result.skipped] == [
        (f"{MOE}/E=64,N=512,device_name=NVIDIA_L40S.json", "tuned config is not readable JSON")
    ]
    (f,) = [f for f in result.findings if f.missing == RTX_FILE]
    assert f.extra["copyable"] == 2  # E=64,N=512: B200 does not fit, L40S is unreadable


def test_a_target_rooted_inside_an_engine_package_still_knows_the_engine(tmp_path: Path) -> None:
    d = tmp_path / "vllm/model_executor/layers/fused_moe/configs"
    write_config(d, "E=8,N=8,device_name=NVIDIA_H200.json")
    write_config(d, "E=16,N=8,device_name=NVIDIA_B200.json")
    # vLLM's fused-MoE lookup spells an H200 NVL "NVIDIA_H200", whatever the scan's root
    for root in (tmp_path, d):
        (f,) = _scan(root, "NVIDIA H200 NVL").findings
        assert (f.missing, f.extra["engine"], f.extra["missing_examples"]) == (
            "NVIDIA_H200",
            "vllm",
            ["E=16,N=8"],
        )
