"""The facts file: every arch the issue names is there, every fact has a source, key facts hold."""

from __future__ import annotations

import pytest

from capgap.arch import FEATURES, all_facts, facts_for, known_ccs, source_texts

REQUIRED = [
    "6.0",
    "6.1",
    "7.0",
    "7.5",
    "8.0",
    "8.6",
    "8.7",
    "8.8",
    "8.9",
    "9.0",
    "10.0",
    "10.3",
    "11.0",
    "12.0",
    "12.1",
]
# nvcc 13.0 --list-gpu-code (seen on our machines): every one must be known.
NVCC_13 = [f"{n // 10}.{n % 10}" for n in (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)]
FACT_GROUPS = {"name", "products", "features", "smem", "nvlink", "nvls_multicast"}


def test_every_required_arch_is_present() -> None:
    assert set(REQUIRED) <= set(known_ccs())
    assert set(NVCC_13) <= set(known_ccs())


def test_archs_are_in_ascending_order() -> None:
    numbers = [facts_for(cc).number for cc in known_ccs()]
    assert numbers == sorted(numbers)


@pytest.mark.parametrize("cc", list(all_facts()))
def test_every_fact_names_a_source_that_exists(cc: str) -> None:
    facts = facts_for(cc)
    assert set(facts.sources) == FACT_GROUPS
    texts = source_texts()
    for group, source_id in facts.sources.items():
        assert source_id in texts, f"{cc}: {group} cites unknown source {source_id!r}"
        assert texts[source_id].strip()


def test_every_source_is_cited() -> None:
    cited = {s for f in all_facts().values() for s in f.sources.values()}
    assert cited == set(source_texts())


@pytest.mark.parametrize("cc", list(all_facts()))
def test_shared_memory_is_consistent(cc: str) -> None:
    f = facts_for(cc)
    assert 0 < f.smem_per_block_kb <= f.smem_per_sm_kb
    if f.major >= 7:  # Volta+: one block may take all but 1 KB (Volta/Turing: all of it)
        assert f.smem_per_sm_kb - f.smem_per_block_kb in (0, 1)


def _features(cc: str) -> dict[str, bool]:
    return {name: facts_for(cc).has(name) for name in FEATURES}


def test_rtx_blackwell_has_neither_wgmma_nor_tcgen05_nor_nvlink() -> None:
    for cc in ("12.0", "12.1"):
        f = facts_for(cc)
        assert _features(cc) == {
            "wgmma": False,
            "tcgen05": False,
            "tma": True,
            "clusters": True,
            "fp8_tensor_cores": True,
            "fp4_tensor_cores": True,
        }
        assert (f.nvlink, f.nvswitch, f.nvls_multicast, f.smem_per_block_kb) == ("none", False, False, 99)
    assert "RTX PRO 6000 Blackwell Server Edition" in facts_for("12.0").products
    assert "GeForce RTX 5090" in facts_for("12.0").products


def test_datacenter_blackwell_and_hopper() -> None:
    assert facts_for("10.0").products == ("B200", "GB200")
    assert facts_for("10.3").products == ("B300", "GB300")
    for cc in ("10.0", "10.3"):
        assert _features(cc)["tcgen05"] and not _features(cc)["wgmma"]
        assert facts_for(cc).nvls_multicast
    hopper = facts_for("9.0")
    assert _features("9.0")["wgmma"] and not _features("9.0")["tcgen05"]
    assert "H200" in hopper.products and hopper.nvls_multicast and hopper.smem_per_block_kb == 227


def test_ada_is_8_9_with_fp8_and_no_fp4() -> None:
    ada = facts_for("8.9")
    assert ada.name == "Ada Lovelace"
    assert _features("8.9")["fp8_tensor_cores"] and not _features("8.9")["fp4_tensor_cores"]
    assert not any(_features("8.6").values())


def test_thor_is_11_0_and_8_8_has_no_known_product() -> None:
    assert facts_for("11.0").products == ("Jetson T5000", "Jetson T4000")
    assert facts_for("8.8").products == ()
    assert facts_for("8.8").name == "Ampere"


def test_to_json_resolves_source_texts() -> None:
    doc = facts_for("12.0").to_json()
    assert doc["sources"]["products"].startswith("NVIDIA 'CUDA GPU Compute Capability' list")
    assert set(doc["features"]) == set(FEATURES)
