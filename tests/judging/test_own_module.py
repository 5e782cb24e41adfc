"""A feature the target's family has in a module of its own (FlashInfer's SM100 DSA indexer in
`experimental/cake_dsa_indexer_det/`, 12.x's in `experimental/sm120_dsa_indexer.py`): the SM100
module leaving 12.0 out is low, and names the family's module."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.judging.ownmodule import family_modules
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

_TABLE = (
    'POLICY = {"sm_100a": {"tile": 128}, "sm_103a": {"tile": 128}}\n\n\n'
    "def policy(arch):\n    return POLICY[arch]\n"
)


def _scan(tmp_path: Path, family_file: str) -> Finding:
    files = {
        "eng/__init__.py": "",
        "eng/experimental/__init__.py": "",
        "eng/experimental/cake_dsa_indexer_det/__init__.py": "",
        "eng/experimental/cake_dsa_indexer_det/cake_jit.py": _TABLE,
        family_file: "def run(q, k):\n    return q @ k\n",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, binaries=False)
    (found,) = [f for f in run_scan([str(tmp_path)], options).findings if f.path.endswith("cake_jit.py")]
    return found


def test_a_module_of_the_targets_family_for_the_same_feature_makes_the_finding_low(tmp_path: Path) -> None:
    found = _scan(tmp_path, "eng/experimental/sm120_dsa_indexer.py")
    assert found.severity == "low"
    assert found.extra["own_module"] == "eng/experimental/sm120_dsa_indexer"
    assert found.consequence.endswith(
        "; 12.0's family has this feature in a module of its own: eng/experimental/sm120_dsa_indexer"
    )


def test_a_family_module_of_another_feature_changes_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, "eng/experimental/sm120_sparse_indexer.py")
    assert found.severity == "high"  # a KeyError on the target
    assert "own_module" not in found.extra


def test_family_modules_need_two_feature_words_and_the_familys_token() -> None:
    rels = [
        "eng/mla/_sparse_mla_sm120/_api.py",  # a package named for the family
        "eng/gemm/sm12x_cute/runner.py",  # `cute` alone names no feature
        "eng/attention/sm100_fmha.py",  # another family
        "eng/ops/kernel_sm120.py",  # words of where code sits only
    ]
    assert family_modules(rels, 12) == {"eng/mla/_sparse_mla_sm120": frozenset({"sparse", "mla"})}
