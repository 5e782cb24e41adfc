"""Baselines: --write-baseline, then --baseline says what is new, gone and unchanged, and the
exit code counts the new ones only. Bad files are one-line errors; no other file is overwritten."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli_runner import run_cli

V1 = """
    import torch

    SIZES = {9: 1, 10: 2}


    def size():
        return SIZES[torch.cuda.get_device_capability()[0]]


    def pick(x):
        if torch.cuda.get_device_capability()[0] == 10:
            return blackwell_kernel(x)
        return x
    """
# lines above moved everything; `pick` is fixed upstream (gone); a new crash appears (new, high)
V2 = """
    import torch

    # a comment that moves every line


    SIZES = {9: 1, 10: 2}


    def size():
        return SIZES[torch.cuda.get_device_capability()[0]]


    def pick(x):
        if torch.cuda.get_device_capability()[0] >= 10:
            return blackwell_kernel(x)
        return x


    STAGES = {9: 3, 10: 4}


    def stages():
        return STAGES[torch.cuda.get_device_capability()[0]]
    """


def _tree(root: Path, body: str) -> Path:
    (root / "eng").mkdir(parents=True, exist_ok=True)
    (root / "eng" / "k.py").write_text(textwrap.dedent(body))
    return root


@pytest.fixture
def chdir_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_write_then_compare(chdir_tmp: Path) -> None:
    tree = _tree(chdir_tmp / "eng-tree", V1)
    base = chdir_tmp / "base.json"
    first = run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(base), "--format", "json")
    assert first.code == 1 and f"baseline written: {base} (2 findings)" in first.err
    written = json.loads(base.read_text())
    assert written["capgap_baseline"] == 1 and len(written["findings"]) == 2
    old = {f["symbol"]: f for f in written["findings"]}

    _tree(tree, V2)
    result = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(base), "--format", "json")
    data = json.loads(result.out)
    assert len(data["findings"]) == 2  # `findings` stays the full list: SIZES and STAGES
    assert [f["symbol"] for f in data["new"]] == ["STAGES"]
    assert [f["symbol"] for f in data["gone"]] == [old["get_device_capability"]["symbol"]]
    assert [f["symbol"] for f in data["stayed"]] == ["SIZES"]
    stayed = data["stayed"][0]
    assert stayed["fingerprint"] == old["SIZES"]["fingerprint"]
    assert stayed["before"] == {"line": 4, "consequence": "KeyError at run time on 12.0 (eng/k.py:8)"}
    assert stayed["line"] == 7 and stayed["consequence"] == "KeyError at run time on 12.0 (eng/k.py:11)"
    assert {f["fingerprint"] for f in data["new"] + data["stayed"]} <= {
        f["fingerprint"] for f in data["findings"]
    }
    assert result.code == 1  # the new STAGES is high (a KeyError)

    text = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(base))
    lines = text.out.splitlines()
    assert "1 new, 1 gone, 1 unchanged against " + str(base) in text.out
    new_at = next(i for i, line in enumerate(lines) if line.startswith("1 new"))
    assert "STAGES has entries" in lines[new_at + 1]  # the new one first, before the rest by file
    assert lines.index(f"baseline {base}") < new_at


def test_exit_code_counts_only_new(chdir_tmp: Path) -> None:
    tree = _tree(chdir_tmp / "t", V2)
    base = chdir_tmp / "b.json"
    assert run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(base)).code == 1
    again = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(base))
    assert again.code == 0 and "0 new, 0 gone, 2 unchanged" in again.out
    # a plain `--format json` output is a baseline too
    out = run_cli("scan", str(tree), "--arch", "12.0", "--format", "json").out
    (chdir_tmp / "scan.json").write_text(out)
    assert run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(chdir_tmp / "scan.json")).code == 0


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not JSON"),
        ('{"findings": 3}', "is not a capgap baseline"),
        ("[1, 2]", "is not a capgap baseline"),
        ('{"arch": "12.0", "targets": [], "findings": [{"rule": "x"}]}', "finding 1 has no fingerprint"),
    ],
)
def test_malformed_baseline_is_one_line(chdir_tmp: Path, content: str, says: str) -> None:
    tree = _tree(chdir_tmp / "t", V1)
    bad = chdir_tmp / "bad.json"
    bad.write_text(content)
    result = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(bad))
    assert result.code == 2 and says in result.err and result.out == ""
    assert len(result.err.strip().splitlines()) == 1
    missing = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", str(chdir_tmp / "none.json"))
    assert missing.code == 2 and "no such file" in missing.err


def test_write_baseline_never_overwrites_another_file(chdir_tmp: Path) -> None:
    tree = _tree(chdir_tmp / "t", V1)
    other = chdir_tmp / "notes.json"
    other.write_text('{"my": "notes"}')
    result = run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(other))
    assert result.code == 2 and "not a capgap baseline; refusing to overwrite it" in result.err
    assert other.read_text() == '{"my": "notes"}'
    (chdir_tmp / "dir").mkdir()
    assert run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(chdir_tmp / "dir")).code == 2
    base = chdir_tmp / "b.json"
    assert run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(base)).code == 1
    assert (
        run_cli("scan", str(tree), "--arch", "12.0", "--write-baseline", str(base)).code == 1
    )  # its own: replaced
    assert [p.name for p in chdir_tmp.iterdir() if "capgap-tmp" in p.name] == []


def test_baseline_and_against_exclude_each_other(chdir_tmp: Path) -> None:
    tree = _tree(chdir_tmp / "t", V1)
    result = run_cli("scan", str(tree), "--arch", "12.0", "--baseline", "x.json", "--against", str(tree))
    assert result.code == 2 and "exclude each other" in result.err


def test_sarif_partial_fingerprints_validate(chdir_tmp: Path) -> None:
    import jsonschema

    tree = _tree(chdir_tmp / "t", V2)
    sarif = json.loads(run_cli("scan", str(tree), "--arch", "12.0", "--format", "sarif").out)
    schema = json.loads(
        (Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json").read_text()
    )
    jsonschema.validate(sarif, schema, cls=jsonschema.Draft4Validator)
    data = json.loads(run_cli("scan", str(tree), "--arch", "12.0", "--format", "json").out)
    prints = [r["partialFingerprints"]["capgap/v2"] for r in sarif["runs"][0]["results"]]
    assert prints == [f["fingerprint"] for f in data["findings"]] and len(set(prints)) == len(prints)
    (chdir_tmp / "old.json").write_text(json.dumps({**data, "findings": data["findings"][:1]}))
    against = run_cli("scan", str(tree), "--arch", "12.0", "--format", "sarif", "--baseline", "old.json")
    diffed = json.loads(against.out)
    jsonschema.validate(diffed, schema, cls=jsonschema.Draft4Validator)
    states = [r["baselineState"] for r in diffed["runs"][0]["results"]]
    assert states == ["unchanged"] + ["new"] * (len(prints) - 1)
