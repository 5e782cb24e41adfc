"""facts.toml is parsed once per edit: later runs load the parse from beside the byte code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from capgap.arch import facts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

FACTS = Path(facts.__file__).with_name("facts.toml")


@pytest.fixture
def writes_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _cache_files(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.iterdir()) if cache_dir.exists() else []


def test_second_load_comes_from_the_cache(tmp_path: Path, writes_bytecode: None, monkeypatch) -> None:
    data = FACTS.read_bytes()
    first = facts.parsed_facts(data, tmp_path / "__pycache__")
    assert first == tomllib.loads(data.decode())
    assert _cache_files(tmp_path / "__pycache__") == [f"facts.toml.{sys.implementation.cache_tag}.marshal"]

    def no_parse(_: bytes) -> dict:
        raise AssertionError("parsed again although the cache matches")

    monkeypatch.setattr(facts, "_parse", no_parse)
    assert facts.parsed_facts(data, tmp_path / "__pycache__") == first


def test_an_edited_file_is_parsed_again(tmp_path: Path, writes_bytecode: None) -> None:
    facts.parsed_facts(b"[arch]\nx = 1\n", tmp_path)
    edited = b"[arch]\nx = 2\n"
    assert facts.parsed_facts(edited, tmp_path) == {"arch": {"x": 2}}
    assert facts.parsed_facts(edited, tmp_path) == {"arch": {"x": 2}}  # and the cache now says so


def test_a_corrupt_cache_is_parsed_over(tmp_path: Path, writes_bytecode: None) -> None:
    (tmp_path / f"facts.toml.{sys.implementation.cache_tag}.marshal").write_bytes(b"\x00garbage")
    assert facts.parsed_facts(b"a = 1\n", tmp_path) == {"a": 1}
    assert facts.parsed_facts(b"a = 1\n", tmp_path) == {"a": 1}


def test_nothing_written_under_pythondontwritebytecode(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert facts.parsed_facts(b"a = 1\n", tmp_path / "__pycache__") == {"a": 1}
    assert _cache_files(tmp_path / "__pycache__") == []


def test_a_value_marshal_cannot_hold_is_just_parsed(tmp_path: Path, writes_bytecode: None) -> None:
    data = b"when = 2026-11-29T00:00:00Z\n"  # a datetime: marshal refuses it
    assert facts.parsed_facts(data, tmp_path) == tomllib.loads(data.decode())
    assert _cache_files(tmp_path) == []


def test_the_packaged_facts_load_as_parsed() -> None:
    assert facts._raw() == tomllib.loads(FACTS.read_text(encoding="utf-8"))
