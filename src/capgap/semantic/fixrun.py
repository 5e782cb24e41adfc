"""`capgap fix` end to end: scan, plan, warn, then write through the patch store (or only diff).

The command module only parses options and prints; everything it needs comes from `run_fix`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capgap.arch import ArchSpec, parse_arch
from capgap.errors import EnvironmentProblem, TargetError, UsageError
from capgap.findings import Finding
from capgap.semantic.fixer import FixPlan, plan_fix
from capgap.semantic.hardware import Machine, declared_machine, probed_machine

# (target spec, arch, python) -> (scan root, findings)
Scanner = Callable[[str, ArchSpec, "str | None"], tuple[Path, list[Finding]]]


@dataclass(frozen=True)
class FixOptions:
    target: str
    arch: str
    values: Path | None = None
    like: str | None = None
    dry_run: bool = False
    store: str | None = None
    prefer: str = "upstream"
    configs: bool = False
    device: str | None = None
    python: str | None = None
    name: str | None = None
    only: tuple[str, ...] = ()  # table symbols (qualified or last name) to fix; () for all
    paths: tuple[str, ...] = ()  # files, directories or globs (relative to the target) to fix in


@dataclass
class FixRun:
    plan: FixPlan
    machine: Machine
    dry_run: bool = False
    patch: str | None = None  # the saved patch's name
    store: str | None = None
    messages: list[str] = field(default_factory=list)
    configs: list[Any] | None = None  # capgap.configs.fixer.ConfigCopy, one per missing shape
    # per fixed table, the feature checks that still turn its path off (the rest of a chain)
    blockers: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {
            **self.plan.to_json(),
            "dry_run": self.dry_run,
            "patch": self.patch,
            "store": self.store,
            "machine": dataclasses.asdict(self.machine),
            "blockers": self.blockers,
        }
        if self.configs is not None:
            out["configs"] = [c.to_json() for c in self.configs]
        return out


def scan_tables(spec: str, arch: ArchSpec, python: str | None) -> tuple[Path, list[Finding]]:
    """Run the scan (no binaries: only tables matter here); its root and table findings."""
    try:
        from capgap.scan.analyzers import ScanOptions
        from capgap.scan.run import run_scan
    except ImportError as exc:
        raise EnvironmentProblem(f"capgap's scan is not available here ({exc})") from exc
    report = run_scan([spec], ScanOptions(archs=(arch,), binaries=False), python)
    root = Path(report.targets[0].target.root)
    return root, [f for f in report.findings if f.rule == "table-missing-arch"]


def _machine(device: str | None) -> Machine:
    return declared_machine(device) if device else probed_machine()


def _patch_target(opts: FixOptions) -> tuple[Any, str | None]:
    from capgap.patches.recall import resolve_recalled
    from capgap.patches.store import Store, store_dir

    try:
        if opts.python or Path(opts.target).expanduser().is_dir():
            return resolve_recalled(Store(""), opts.target, opts.python)  # no store look-up needed
        return resolve_recalled(Store(store_dir(opts.store)), opts.target, opts.python)
    except TargetError as exc:
        if opts.dry_run:
            return None, None
        raise TargetError(
            f"{exc}; capgap fix writes only to a git checkout or an installed "
            "distribution, so the edit is kept as a patch (--dry-run shows the diff)"
        ) from exc


def _rebase(findings: list[Finding], scan_root: Path, root: Path) -> list[Finding]:
    """Finding paths relative to the patch target's root (a git checkout's top, not the subdir)."""
    if scan_root.resolve() == root.resolve():
        return findings
    out = []
    for f in findings:
        rel = (scan_root / f.path).resolve().relative_to(root.resolve()).as_posix()
        out.append(dataclasses.replace(f, path=rel))
    return out


def run_fix(opts: FixOptions, scan: Scanner = scan_tables) -> FixRun:
    arch = parse_arch(opts.arch)
    like = parse_arch(opts.like) if opts.like else None
    if opts.prefer not in ("upstream", "ours"):
        raise UsageError(f"--prefer must be 'ours' or 'upstream', not {opts.prefer!r}")
    measured = values = None
    if opts.values is not None:
        from capgap.semantic.values import measured_lookup
        from capgap.tune.values import load_values

        values = load_values(opts.values)
        if not values["tables"] and not values["multimem_world_sizes"]:
            why = values.get("no_values") or "it holds no table values"
            raise UsageError(f"{opts.values} has no values for capgap fix to apply: {why}")
        measured = measured_lookup(values)
    target, recalled = _patch_target(opts)
    if target is not None and target.kind == "dist" and target.python:
        opts = dataclasses.replace(opts, python=target.python)  # the scan reads the same environment
    finished: list[str] = []
    if target is not None and not opts.dry_run:
        from capgap.semantic.writer import finish_updates

        finished = finish_updates(_store(opts), target)
    scan_root, findings = scan(opts.target, arch, opts.python)
    root = Path(target.root) if target is not None else scan_root
    machine = _machine(opts.device)
    chosen = Chosen(opts, root)
    findings = [f for f in _rebase(findings, scan_root, root) if chosen(f.path, f.symbol)]
    plan = plan_fix(findings, root, arch, like=like, measured=measured, machine=machine, prefer=opts.prefer)
    if values is not None and measured is not None:
        from capgap.semantic.remeasure import plan_measured, value_tables, written_by_capgap
        from capgap.semantic.values import answers

        has = answers(values)
        files = [rel for rel in _tree_files(target, root) if rel.endswith(".py") and chosen.path_ok(rel)]
        tables = [t for t in value_tables(root, files, values, has) if chosen(t[0], t[1])]
        written = written_by_capgap(_store(opts), target) if target is not None else {}
        plan_measured(plan, tables, measured, written, prefer=opts.prefer, machine=machine)
    run = FixRun(plan, machine, dry_run=opts.dry_run, blockers=_blockers(findings, plan))
    run.messages += ([recalled] if recalled else []) + finished
    run.messages += chosen.unmatched(arch.cc)
    if not opts.dry_run and plan.changed:
        from capgap.patches.store import Store, store_dir
        from capgap.semantic.writer import write_plan

        store = Store(store_dir(opts.store))
        note = f"capgap fix --arch {arch.cc}: {len(plan.records())} table entries"
        patch, recovered = write_plan(plan, store, target, name=opts.name, note=note)
        run.messages += recovered
        run.patch, run.store = patch.name, str(store.path)
    if opts.configs:
        run.configs = _fix_configs(opts, arch, target)
    return run


class Chosen:
    """--only SYMBOL and --path filters: which tables this run may touch."""

    def __init__(self, opts: FixOptions, root: Path) -> None:
        self.only = opts.only
        self.paths = [self._relative(p, root) for p in opts.paths]
        self.matched: set[str] = set()

    @staticmethod
    def _relative(spec: str, root: Path) -> str:
        """A path that exists (absolute or from the cwd) relative to the target's root; else as
        given (a path or glob relative to the root)."""
        path = Path(spec).expanduser()
        if path.exists():
            try:
                return path.resolve().relative_to(root.resolve()).as_posix() or "."
            except ValueError:
                raise UsageError(f"--path {spec} is outside the target {root}") from None
        return spec.rstrip("/")

    def path_ok(self, rel: str) -> bool:
        from fnmatch import fnmatchcase

        return not self.paths or any(
            p == "." or rel == p or rel.startswith(p + "/") or fnmatchcase(rel, p) for p in self.paths
        )

    def __call__(self, rel: str, symbol: str) -> bool:
        if not self.path_ok(rel):
            return False
        if not self.only:
            return True
        name = symbol.rsplit(".", 1)[-1]
        hits = [s for s in self.only if s in (symbol, name)]
        self.matched.update(hits)
        return bool(hits)

    def unmatched(self, cc: str) -> list[str]:
        return [
            f"--only {s}: no table of that name (under the --path given) needs an entry for {cc}"
            for s in self.only
            if s not in self.matched
        ]


def _blockers(findings: list[Finding], plan: FixPlan) -> list[dict[str, Any]]:
    """What each table this fix writes still has in its way (`if handle.multicast_ptr == 0:`)."""
    fixed = {(e.edit.path, e.edit.symbol) for e in plan.entries}
    out: list[dict[str, Any]] = []
    for f in findings:
        if (f.path, f.symbol) in fixed:
            # (a table keyed by what this one gives is no blocker where the fix writes it too)
            out += [
                {"table": f.symbol, **b}
                for b in f.extra.get("blockers", [])
                if (b["path"], b["source"]) not in fixed
            ]
    return out


def _store(opts: FixOptions) -> Any:
    from capgap.patches.store import Store, store_dir

    return Store(store_dir(opts.store))


def _tree_files(target: Any, root: Path) -> list[str]:
    """The target's own files: a checkout's tracked ones, a dist's RECORD; else every .py file."""
    if target is not None:
        return list(target.tracked_files())
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if p.is_file())


def _fix_configs(opts: FixOptions, arch: ArchSpec, patch_target: Any) -> list[Any]:
    """`--configs`: copy the device's missing tuned-config files (capgap.configs.fixer)."""
    from capgap.configs.fixer import fix_configs
    from capgap.targets import resolve_target

    devices = [opts.device] if opts.device else _probed_gpu_names()
    store = None
    if not opts.dry_run and patch_target is not None:
        from capgap.patches.store import Store, store_dir

        store = Store(store_dir(opts.store))
    return fix_configs(
        resolve_target(opts.target, opts.python),
        devices,
        (arch,),
        dry_run=opts.dry_run,
        store=store,
        python=opts.python,
        patch_target=patch_target,
    )


def _probed_gpu_names() -> list[str]:
    try:
        from capgap.probe.gpus import probe_machine  # type: ignore[import-not-found]

        return [g.name for g in probe_machine().gpus]
    except Exception:  # no probe, no driver: fix_configs asks for --device
        return []
