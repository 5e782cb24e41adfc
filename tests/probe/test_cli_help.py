"""Plain (non-rich) help, chosen for start-up time, still documents every verb and option."""

from __future__ import annotations

from tests.cli_runner import run_cli


def test_top_level_help_lists_probe_and_arch() -> None:
    r = run_cli("--help")
    assert r.code == 0
    assert "Usage: capgap [OPTIONS] COMMAND [ARGS]..." in r.out
    assert "probe" in r.out and "arch" in r.out and "--version" in r.out


def test_probe_and_arch_help_show_their_options() -> None:
    probe = run_cli("probe", "--help")
    assert probe.code == 0
    assert "--python" in probe.out and "--format" in probe.out
    arch = run_cli("arch", "--help")
    assert arch.code == 0
    assert "spelling" in arch.out and "--format" in arch.out


def test_sarif_is_refused_for_fact_reports() -> None:
    for args in (["probe"], ["arch", "9.0"]):
        r = run_cli(*args, "--format", "sarif")
        assert r.code == 2
        assert "not findings" in r.err
