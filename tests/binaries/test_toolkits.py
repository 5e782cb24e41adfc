from __future__ import annotations

import pytest

from capgap.binaries.toolkits import named_toolkit, too_old_for


@pytest.mark.parametrize(
    ("name", "toolkit"),
    [
        ("libbitsandbytes_cuda118.so", (11, 8)),
        ("libbitsandbytes_cuda132.so", (13, 2)),
        ("_C-cu121.so", (12, 1)),
        ("libfoo_cuda12.6.so", (12, 6)),
        ("_C_cutlass_90a.abi3.so", None),  # no toolkit: `cu` begins another word
        ("libcudart.so.12", None),
        ("libfoo_cuda1180.so", None),  # no toolkit spelled so
    ],
)
def test_the_toolkit_a_name_names(name: str, toolkit: tuple[int, int] | None) -> None:
    assert named_toolkit(name) == toolkit


def test_too_old_only_below_the_first_toolkit_of_the_arch() -> None:
    assert too_old_for("libx_cuda126.so", "12.0") == (
        "CUDA 12.6, which cannot target sm_120; CUDA 12.8 is the first toolkit that can"
    )
    assert too_old_for("libx_cuda128.so", "12.0") == ""
    assert too_old_for("libx_cuda128.so", "12.1") != ""  # sm_121 came with CUDA 12.9
    assert too_old_for("libx.so", "12.0") == ""
    assert too_old_for("libx_cuda118.so", "7.5") == ""  # an arch the table leaves out: no claim
