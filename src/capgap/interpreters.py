"""Another environment's interpreter (`--python`), without letting that environment run anything.

The interpreter is started once, isolated (`-I`: no current directory or user site on its path,
no PYTHON* variables), without site processing (`-S`: no `.pth` lines, no `sitecustomize` or
`usercustomize`), in an empty directory, and asked only what its standard library knows (its
version, tags and prefixes). Everything else (which site directories it has, the paths its `.pth`
files add, which distributions are installed) capgap reads from files itself. `import` lines in
`.pth` files are code: they are never run, and the paths they would add are not followed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from capgap.boundedread import read_regular
from capgap.errors import EnvironmentProblem, UsageError

_PTH_MAX_BYTES = 1 << 20

# Runs under the other interpreter with -I -S: its standard library only, reads no package.
# The venv logic is site.py's (`venv()`), which -S skips: pyvenv.cfg beside or above the
# executable makes that directory the prefix; include-system-site-packages adds the base's.
_QUERY = r"""
import json, os, site, sys, sysconfig
exe = os.path.abspath(sys.executable)
prefixes, venv, system_site = [sys.prefix, sys.exec_prefix], None, True
for d in (os.path.dirname(exe), os.path.dirname(os.path.dirname(exe))):
    cfg = os.path.join(d, "pyvenv.cfg")
    if os.path.isfile(cfg):
        venv = os.path.dirname(os.path.dirname(exe))
        with open(cfg, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    system_site = value.strip().lower() == "true"
        break
if venv is not None:
    prefixes = [venv] + (prefixes if system_site else [])
dirs = []
if venv is None or system_site:
    try:
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
dirs += site.getsitepackages(list(dict.fromkeys(prefixes)))
print(json.dumps({
    "executable": exe,
    "version": ".".join(str(n) for n in sys.version_info[:3]),
    "implementation": sys.implementation.name,
    "soabi": sysconfig.get_config_var("SOABI"),
    "sitedirs": dirs,
}))
"""


@dataclass(frozen=True)
class Interpreter:
    executable: str
    version: str  # "3.12.1"
    implementation: str  # "cpython"
    soabi: str | None
    sitedirs: tuple[str, ...]  # in import order, with the paths the .pth files add

    @property
    def major_minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def executable(python: str) -> Path:
    """--python's interpreter: a file, or a venv directory (as `pip --python` accepts)."""
    exe = Path(python).expanduser()
    if exe.is_dir():
        exe = next((c for c in (exe / "bin" / "python", exe / "Scripts" / "python.exe") if c.exists()), exe)
    if not exe.is_file():
        raise UsageError(f"--python {python}: no such file")
    return exe


def run_isolated(exe: str | Path, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`exe -I -S ARGS` in an empty directory of its own (no module there to import)."""
    with tempfile.TemporaryDirectory(prefix="capgap-neutral-") as neutral:
        return subprocess.run(
            [str(exe), "-I", "-S", *args],
            cwd=neutral,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@lru_cache(maxsize=8)
def describe(python: str) -> Interpreter:
    """What capgap needs to know of another interpreter (one isolated run, cached)."""
    exe = executable(python)
    try:
        proc = run_isolated(exe, ["-c", _QUERY])
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--python {python}: cannot run it ({exc})") from exc
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"--python {python}: asking it for its site directories failed: {last}")
    try:
        raw = json.loads(proc.stdout)
        dirs = [str(d) for d in raw["sitedirs"]]
        return Interpreter(
            str(raw["executable"]),
            str(raw["version"]),
            str(raw["implementation"]),
            raw.get("soabi"),
            tuple(with_pth_paths(dirs)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise EnvironmentProblem(f"--python {python}: unreadable answer ({exc})") from exc


def with_pth_paths(sitedirs: list[str]) -> list[str]:
    """The site directories that exist, each followed by the directories its `.pth` files name
    (what site.py would add, read as text; `import` lines are code and are skipped)."""
    out: list[str] = []
    for sitedir in sitedirs:
        if not os.path.isdir(sitedir) or sitedir in out:
            continue
        out.append(sitedir)
        try:
            names = sorted(n for n in os.listdir(sitedir) if n.endswith(".pth") and not n.startswith("."))
        except OSError:
            continue
        for name in names:
            try:
                text = read_regular(os.path.join(sitedir, name), _PTH_MAX_BYTES).decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines():
                line = line.rstrip()
                if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                    continue
                path = os.path.abspath(os.path.join(sitedir, line))
                if path not in out and os.path.isdir(path):
                    out.append(path)
    return out


def own_paths() -> list[str]:
    """This interpreter's import path, less whatever the current directory put there."""
    cwd = os.getcwd()
    return [p for p in sys.path if p not in ("", cwd)]


def site_paths(python: str | None) -> list[str]:
    """Where distributions are looked up: another interpreter's site directories, or ours."""
    return own_paths() if python is None else list(describe(python).sitedirs)
