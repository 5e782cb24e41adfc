"""Configuration: `[tool.capgap]` in a pyproject.toml, or a capgap.toml, found upward from the
working directory as ruff finds its own (a capgap.toml wins over a pyproject.toml in the same
directory; a pyproject.toml without `[tool.capgap]` is passed over). Command-line flags win.

    arch = ["12.0"]               # or "12.0"
    device = ["NVIDIA RTX PRO 6000 Blackwell Server Edition"]
    fail-on = "high"
    select = ["table-missing-arch"]            # rule ids; empty: every rule
    ignore = ["build-missing-arch"]
    exclude = ["sglang/test/**", "benchmark"]  # findings in these paths are not reported
    per-path-ignores = { "sglang/jit_kernel/**" = ["gate-excludes-arch"] }
    acknowledged = [{ fingerprint = "3f2a...", reason = "no NVLS on PCIe boards: intended" }]
    patch-store = "infra/capgap-patches"       # relative to the file
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capgap.errors import UsageError
from capgap.findings import SEVERITIES

CONFIG_NAMES = ("capgap.toml", "pyproject.toml")  # in this order within one directory
_MAX_BYTES = 4 << 20


@dataclass(frozen=True)
class Settings:
    path: Path | None = None  # the file they came from; None: no file (defaults)
    arch: tuple[str, ...] = ()
    device: tuple[str, ...] = ()
    fail_on: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_path_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    acknowledged: dict[str, str] = field(default_factory=dict)  # fingerprint -> reason
    patch_store: Path | None = None


def parse_toml(data: bytes) -> dict[str, Any]:
    """TOML to a dict; ValueError for what is not TOML (or not UTF-8)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(str(exc)) from None


def _read(path: Path) -> dict[str, Any]:
    from capgap.boundedread import read_regular

    try:
        data = read_regular(path, _MAX_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read the config {path}: {exc.strerror or exc}") from None
    try:
        return parse_toml(data)
    except ValueError as exc:
        raise UsageError(f"{path} is not valid TOML: {str(exc)[:120]}") from None


def _section(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    """capgap.toml: the whole file; pyproject.toml: its [tool.capgap] (None: it has none)."""
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool")
    section = tool.get("capgap") if isinstance(tool, dict) else None
    if section is not None and not isinstance(section, dict):
        raise UsageError(f"{path}: [tool.capgap] must be a table")
    return section


def find_config(start: Path) -> Path | None:
    """The nearest configuration at or above `start`."""
    for directory in (start, *start.parents):
        for name in CONFIG_NAMES:
            candidate = directory / name
            if not candidate.is_file():
                continue
            if name == "capgap.toml":
                return candidate
            try:
                text = candidate.read_bytes()[:_MAX_BYTES]
            except OSError:
                continue
            if b"capgap" in text and _section(candidate, _read(candidate)) is not None:
                return candidate
    return None


def _strings(path: Path, key: str, value: object, single_ok: bool = False) -> tuple[str, ...]:
    if single_ok and isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        what = "a string or a list of strings" if single_ok else "a list of strings"
        raise UsageError(f"{path}: {key!r} must be {what}")
    return tuple(value)


def _rules(path: Path, key: str, value: object, known: frozenset[str]) -> tuple[str, ...]:
    ids = _strings(path, key, value)
    for rid in ids:
        if rid not in known:
            rules = ", ".join(sorted(known))
            raise UsageError(f"{path}: {key!r} names an unknown rule {rid!r} (rules: {rules})")
    return ids


def _archs(path: Path, values: tuple[str, ...]) -> tuple[str, ...]:
    from capgap.arch import parse_arch

    for value in values:
        try:
            parse_arch(value)
        except UsageError as exc:
            raise UsageError(f"{path}: 'arch': {exc}") from None
    return values


def _acknowledged(path: Path, value: object) -> dict[str, str]:
    if not isinstance(value, list):
        raise UsageError(f"{path}: 'acknowledged' must be a list of {{fingerprint, reason}} tables")
    out: dict[str, str] = {}
    for i, entry in enumerate(value):
        where = f"acknowledged[{i}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{path}: {where} must be a table with 'fingerprint' and 'reason'")
        for key in entry:
            if key not in ("fingerprint", "reason"):
                raise UsageError(f"{path}: unknown key {where}.{key}")
        for key in ("fingerprint", "reason"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise UsageError(f"{path}: {where}.{key} must be a non-empty string")
        out[entry["fingerprint"].strip()] = entry["reason"].strip()
    return out


def _per_path(path: Path, value: object, known: frozenset[str]) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise UsageError(f"{path}: 'per-path-ignores' must be a table of glob = [rule ids]")
    return {str(g): _rules(path, f"per-path-ignores.{g}", ids, known) for g, ids in value.items()}


def _fail_on(path: Path, value: object) -> str:
    if value not in SEVERITIES:
        raise UsageError(f"{path}: 'fail-on' must be one of {', '.join(SEVERITIES)}, not {value!r}")
    return str(value)


def _store(path: Path, value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{path}: 'patch-store' must be a non-empty string (a directory)")
    return (path.parent / Path(value).expanduser()).resolve()


def load(path: Path, known_rules: frozenset[str]) -> Settings:
    """The settings in `path` (a capgap.toml or pyproject.toml); unknown keys are errors."""
    section = _section(path, _read(path))
    if section is None:
        raise UsageError(f"{path} has no [tool.capgap] table")
    parse: dict[str, tuple[str, Callable[[object], object]]] = {
        "arch": ("arch", lambda v: _archs(path, _strings(path, "arch", v, single_ok=True))),
        "device": ("device", lambda v: _strings(path, "device", v, single_ok=True)),
        "fail-on": ("fail_on", lambda v: _fail_on(path, v)),
        "select": ("select", lambda v: _rules(path, "select", v, known_rules)),
        "ignore": ("ignore", lambda v: _rules(path, "ignore", v, known_rules)),
        "exclude": ("exclude", lambda v: _strings(path, "exclude", v)),
        "per-path-ignores": ("per_path_ignores", lambda v: _per_path(path, v, known_rules)),
        "acknowledged": ("acknowledged", lambda v: _acknowledged(path, v)),
        "patch-store": ("patch_store", lambda v: _store(path, v)),
    }
    values: dict[str, object] = {}
    for key, value in section.items():
        if key not in parse:
            hint = f" (did you mean {key.replace('_', '-')!r}?)" if key.replace("_", "-") in parse else ""
            raise UsageError(f"{path}: unknown key {key!r}{hint}")
        attr, convert = parse[key]
        values[attr] = convert(value)
    return Settings(path=path, **values)  # type: ignore[arg-type]


def discover(config: str | None = None, no_config: bool = False, start: Path | None = None) -> Settings:
    """--config FILE, else the nearest file above `start` (the working directory); --no-config: none."""
    if no_config:
        if config:
            raise UsageError("--config and --no-config exclude each other")
        return Settings()
    if config:
        path = Path(config).expanduser()
        if not path.is_file():
            why = "not a regular file" if path.exists() else "no such file"
            raise UsageError(f"--config {config}: {why}")
    else:
        found = find_config((start or Path.cwd()).resolve())
        if found is None:
            return Settings()
        path = found
    from capgap.scan.analyzers import rule_ids

    return load(path.resolve(), rule_ids())


def with_rules(settings: Settings, select: list[str], ignore: list[str]) -> Settings:
    """--select / --ignore (comma-separated, repeatable) in place of the file's."""
    from dataclasses import replace

    from capgap.scan.analyzers import rule_ids

    known = rule_ids() if select or ignore else frozenset()
    out = settings
    for flag, values in (("select", select), ("ignore", ignore)):
        ids = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
        if values:
            out = replace(out, **{flag: _rules(Path(f"--{flag}"), "ids", list(ids), known)})
    return out


def configured_store(start: Path | None = None) -> Path | None:
    """The patch store a config file names (for the patch verbs, which take no --config)."""
    return discover(start=start).patch_store
