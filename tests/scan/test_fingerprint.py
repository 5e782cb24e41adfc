"""Fingerprints: the same finding keeps its id when lines move and the statement is reformatted;
another symbol or rule gets another one; collisions get a suffix in file order."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from capgap.findings import Finding
from capgap.scan.fingerprint import fingerprints, normalize, package_name
from tests.cli_runner import run_cli

GATES = """
    import torch


    def pick(x):
        if torch.cuda.get_device_capability()[0] in (9, 10):  # fast path
            return fused_attention(x)
        return slow_attention(x)


    def other(x):
        if torch.cuda.get_device_capability()[0] == 10:
            return blackwell_kernel(x)
        return x

    SIZES = {9: 1, 10: 2}


    def size():
        return SIZES[torch.cuda.get_device_capability()[0]]
    """

# the same code reformatted: the test split over lines, other quotes and spacing, comments moved,
# and eleven lines inserted above everything
MOVED = "# a header\n" * 6 + textwrap.dedent(
    """
    import os
    import torch

    UNRELATED = os.environ.get('X')


    def pick(x):
        # the fast path
        if torch.cuda.get_device_capability()[
            0
        ] in (9,10,):
            return fused_attention(x)
        return slow_attention(x)


    def other(x):
        if torch.cuda.get_device_capability()[0]==10:
            return blackwell_kernel(x)
        return x

    SIZES = {9: 1,   10: 2}


    def size():
        return SIZES[torch.cuda.get_device_capability()[0]]
    """
)


def _scan(root: Path, body: str) -> dict[str, dict]:
    (root / "eng").mkdir(parents=True, exist_ok=True)
    (root / "eng" / "gates.py").write_text(textwrap.dedent(body))
    result = run_cli("scan", str(root), "--arch", "12.0", "--format", "json", "--no-cache")
    assert result.code in (0, 1), result.err
    findings = json.loads(result.out)["findings"]
    return {f"{f['rule']} {f['symbol']} {f['extra'].get('context', '')}": f for f in findings}


def test_fingerprints_survive_moves_and_reformatting(tmp_path: Path) -> None:
    before = _scan(tmp_path / "v1", GATES)
    after = _scan(tmp_path / "v2", MOVED)
    assert set(before) == set(after) and len(before) >= 3, sorted(before)
    for key, f in before.items():
        assert after[key]["line"] != f["line"]  # every one moved
        assert after[key]["fingerprint"] == f["fingerprint"], key
    prints = [f["fingerprint"] for f in before.values()]
    assert len(set(prints)) == len(prints)  # another symbol, rule or function: another fingerprint


def test_a_different_test_changes_the_fingerprint(tmp_path: Path) -> None:
    before = _scan(tmp_path / "v1", GATES)
    changed = _scan(tmp_path / "v2", GATES.replace("in (9, 10)", "in (9, 10, 11)"))
    key = next(k for k in before if k.endswith(" pick"))
    assert changed[key]["fingerprint"] != before[key]["fingerprint"]
    same = next(k for k in before if k.endswith(" other"))
    assert changed[same]["fingerprint"] == before[same]["fingerprint"]


def test_a_table_keeps_its_fingerprint_when_its_values_or_other_keys_change(tmp_path: Path) -> None:
    before = _scan(tmp_path / "v1", GATES)
    retuned = _scan(tmp_path / "v2", GATES.replace("SIZES = {9: 1, 10: 2}", "SIZES = {9: 4, 10: 8, 11: 8}"))
    assert retuned["table-missing-arch SIZES "]["present"] == ["9", "10", "11"]
    assert (
        retuned["table-missing-arch SIZES "]["fingerprint"]
        == before["table-missing-arch SIZES "]["fingerprint"]
    )


def _finding(rule: str = "gate-excludes-arch", symbol: str = "major", line: int = 1, **kw: object) -> Finding:
    return Finding(rule, "medium", "a/b.py", line, symbol, ("10.0",), "12.0", "c", "m", "12.0", **kw)  # type: ignore[arg-type]


def test_rule_symbol_and_package_count_version_and_line_do_not() -> None:
    base = _finding(source="if major == 10:")
    (fp,) = fingerprints([base], ["sglang"])
    assert fingerprints([_finding(source="if major == 10:", line=99)], ["sglang"]) == [fp]
    assert fingerprints([_finding(source="if major==10:  # note")], ["sglang"]) == [fp]
    assert fingerprints([_finding(symbol="minor", source="if major == 10:")], ["sglang"]) != [fp]
    assert fingerprints([_finding(rule="gate-admits-unsupported", source="if major == 10:")], ["sglang"]) != [
        fp
    ]
    assert fingerprints([base], ["vllm"]) != [fp]


def test_collisions_get_a_suffix_in_file_order() -> None:
    twice = [_finding(source="return (", line=30), _finding(source="return (", line=10)]
    first, second = fingerprints(twice, ["p", "p"])
    assert second == first.split(":")[0] and first == f"{second}:2"  # line 10 comes first


def test_normalize() -> None:
    assert normalize('x = f("a",  b)  # why') == normalize("x=f('a', b)")
    assert normalize("f(\n  a,\n  b,\n)") == normalize("f(a, b)")
    assert normalize("not x") != normalize("notx")
    assert normalize("'#' in s  # c") == "'#'in s"  # a hash in a string is no comment


def test_package_name_leaves_the_version_out(tmp_path: Path) -> None:
    (tmp_path / "sglang-0.5.9.dist-info").mkdir()
    assert package_name(None, str(tmp_path)) == "sglang"
    assert package_name("Flash_Infer.Python", "/nowhere") == "flash-infer-python"
    other = tmp_path / "checkout"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "sglang"\nversion = "1"\n')
    assert package_name(None, str(other)) == "sglang"
    assert package_name(None, str(tmp_path / "nothing")) == ""
