"""A command line that starts with a verb builds only that verb's command; help still lists all."""

from __future__ import annotations

import re
import subprocess
import sys

import typer

from capgap import cli
from tests.cli_runner import run_cli

_CHILD = """
import sys
from capgap.cli import main
code = main(["arch", "12.0", "--format", "json"])
print(code, sorted(m for m in sys.modules if m.startswith("capgap.commands.")), file=sys.stderr)
"""


def test_running_a_verb_imports_only_its_command_module() -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True)
    assert '"compute_capability": "12.0"' in proc.stdout
    assert proc.stderr.strip() == "0 ['capgap.commands.arch']"


def _listed(help_text: str) -> list[str]:
    commands = help_text.split("Commands:", 1)[1]
    return re.findall(r"^  (\w+)", commands, re.M)


def test_help_lists_every_verb_whatever_ran_before() -> None:
    fresh = run_cli("--help")
    assert fresh.code == 0
    assert sorted(_listed(fresh.out)) == sorted(cli.VERBS)
    assert run_cli("arch", "9.0").code == 0
    assert run_cli("scan", "--help").code == 0
    assert run_cli("--help").out == fresh.out


def test_the_app_attribute_is_the_whole_app() -> None:
    group = typer.main.get_command(cli.app)
    assert sorted(group.commands) == sorted(cli.VERBS)  # type: ignore[attr-defined]


def test_a_verb_after_a_root_option_still_works() -> None:
    r = run_cli("--help", "scan")  # root help wins, as before
    assert r.code == 0
    assert "Commands:" in r.out
