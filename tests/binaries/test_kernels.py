"""Which images of a library hold which kernels, and which torch ops it registers (binaries.kernels),
read from the committed nvcc-built `torch_ops.so`: `fused_widget_mix_kernel` only in a
zstd-compressed sm_100f image, `widgets::plain_widget_scale_kernel` in sm_80 and sm_100f images."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from capgap.binaries import kernels
from capgap.binaries.kernels import KernelIndex, kernel_index, kernel_name, registered_ops

BOTH = {"fused_widget_mix_kernel": ("sm_100f",), "plain_widget_scale_kernel": ("sm_100f", "sm_80")}


def test_each_kernel_is_read_with_the_images_that_hold_it(data_dir: Path) -> None:
    assert kernel_index(str(data_dir / "torch_ops.so")) == KernelIndex(BOTH, complete=True)


def test_the_ops_a_library_registers_are_its_schema_strings(data_dir: Path) -> None:
    assert registered_ops(str(data_dir / "torch_ops.so")) == {"fused_widget_mix", "plain_widget_scale"}
    # a library without schemas registers nothing, and a file that is no library neither
    assert registered_ops(str(data_dir / "multi.so")) == frozenset()
    assert registered_ops(str(data_dir / "README.md")) == frozenset()


def test_an_image_no_codec_here_reads_leaves_the_index_incomplete(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a zstd decoder the sm_100f image of the fused op stays unread: the index says it is
    incomplete, so nothing can be proved absent from it."""
    monkeypatch.setattr(kernels, "_codec", lambda name: None)
    index = kernel_index(str(data_dir / "torch_ops.so"))
    assert index == KernelIndex({"plain_widget_scale_kernel": ("sm_100f", "sm_80")}, complete=False)


def test_the_index_is_kept_by_the_file_s_identity(data_dir: Path, tmp_path: Path) -> None:
    lib = tmp_path / "torch_ops.so"
    shutil.copy(data_dir / "torch_ops.so", lib)
    cache = tmp_path / "cache"
    assert kernel_index(str(lib), cache) == KernelIndex(BOTH, complete=True)
    (stored,) = (cache / f"kernels-v{kernels.SCHEMA}").rglob("*.json")
    stored.write_text('{"kernels": {"kept_kernel": ["sm_90a"]}, "complete": true}')
    assert kernel_index(str(lib), cache) == KernelIndex({"kept_kernel": ("sm_90a",)}, True)  # read back
    stored.write_text("{not json")
    assert kernel_index(str(lib), cache) == KernelIndex(BOTH, complete=True)  # a damaged entry: read again
    assert kernel_index(str(tmp_path / "missing.so"), cache) is None
    assert kernel_index(str(data_dir / "README.md"), cache) is None  # no binary


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        (
            "_ZN5sm10011fwd_prod_v229attn_res_fwd_online_v2_kernelILi7168ELi9EEEvP13__nv_bfloat16",
            "attn_res_fwd_online_v2_kernel",
        ),
        (
            "_ZN50_GLOBAL__N__994ccf85_17_hc_up_gate_mix_cu_a2c28d9621hc_up_gate_mix_kernelINS_6ConfigE",
            "hc_up_gate_mix_kernel",
        ),
        ("_Z23fused_widget_mix_kernelPfPKfi", "fused_widget_mix_kernel"),
        ("_ZL12local_kernelPf", "local_kernel"),
        ("_ZN7cutlass13device_kernelIN4gemm6KernelEEEvNT_6ParamsE", "device_kernel"),
        ("plain_c_kernel", "plain_c_kernel"),
        ("_ZNS_3fooEv", ""),  # starts with a substitution: nothing of its own
    ],
)
def test_a_kernel_is_named_by_its_innermost_name(symbol: str, name: str) -> None:
    assert kernel_name(symbol) == name


def test_a_damaged_or_hostile_image_is_left_unread(tmp_path: Path) -> None:
    """A zstd image of garbage, and a valid one whose header claims a terabyte inflated (never
    inflated: a hostile header must not size an allocation): unread, the index incomplete, no
    error. A valid image of its claimed size is read."""
    import zstandard

    from capgap.binaries.fatbin import FLAG_ZSTD, KIND_ELF

    from .fatbin_bytes import container, entry

    def image(payload: bytes, claimed: int) -> bytes:
        flags = FLAG_ZSTD | 0x11
        return entry(
            KIND_ELF, 100, flags=flags, payload=payload, compressed_size=len(payload), full_size=claimed
        )

    frame = zstandard.ZstdCompressor().compress(b"\0" * 64)
    garbage = b"\x28\xb5\x2f\xfd" + b"not a zstd frame" * 2
    path = tmp_path / "lib.fatbin"
    path.write_bytes(container(image(frame, 64)))
    assert kernel_index(str(path)) == KernelIndex({}, complete=True)
    for payload, claimed in ((garbage, 4096), (frame, 1 << 40)):
        path.write_bytes(container(image(payload, claimed)))
        assert kernel_index(str(path)) == KernelIndex({}, complete=False)
