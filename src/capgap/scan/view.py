"""What a scan's text and HTML reports show, in which order, and what they hide and why.

First the highs, by subsystem, each with the `capgap fix` command when the fixer can add the
missing entry; then the rest by file. Filters (--where, --model, --all, --max) hide findings from
the reports only: JSON and SARIF keep every finding, and the exit code is judged on all of them.
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from capgap.errors import UsageError
from capgap.findings import Finding, severity_rank
from capgap.scan.run import ScanReport
from capgap.scan.subsystems import SUBSYSTEMS, subsystem

WHERE = ("runtime", "test", "all")
# judging/where.py; "backward" is runtime code
NOT_RUNTIME = {"test", "benchmark", "example", "vendored", "other-device"}
TOP_PER_SUBSYSTEM = 5  # the opening block stays short; further highs are listed by file
# why a finding was hidden -> the flag that shows it, in the order the filters apply
SHOWN_BY = {"where": "--where all", "model": "dropping --model", "low": "--all", "max": "--max 0"}


@dataclass(frozen=True)
class ViewOptions:
    show_all: bool = False  # lows too
    where: str = "runtime"
    model: str | None = None
    max: int = 0  # 0: no limit


@dataclass(frozen=True)
class Item:
    finding: Finding
    target: int  # index into report.targets
    subsystem: str
    fix: str = ""  # the `capgap fix` command that adds the missing entry, when the fixer can


@dataclass
class View:
    top: list[Item] = field(default_factory=list)  # highs, in SUBSYSTEMS order
    rest: list[Item] = field(default_factory=list)  # by target, file, line
    hidden: Counter[str] = field(default_factory=Counter)  # reason (SHOWN_BY's keys) -> count
    tables: int = 0  # shown medium table findings: `capgap fix --dry-run` shows what it would add
    notes: list[str] = field(default_factory=list)  # about the filters (a --model with no files)

    @property
    def shown(self) -> int:
        return len(self.top) + len(self.rest)


def model_name(name: str) -> str:
    return name.strip().lower().replace("-", "_").removesuffix(".py")


def check_options(opts: ViewOptions) -> None:
    if opts.where not in WHERE:
        raise UsageError(f"--where must be one of {', '.join(WHERE)}, not {opts.where!r}")
    if opts.max < 0:
        raise UsageError(f"--max must be 0 (no limit) or more, not {opts.max}")
    if opts.model is not None and not model_name(opts.model):
        raise UsageError("--model needs a model name (the name of its file, e.g. deepseek_v2)")


def where_of(f: Finding) -> str:
    return str((f.extra or {}).get("where", "runtime"))


def model_of(f: Finding) -> str:
    return str((f.extra or {}).get("model") or "")


def _reason(f: Finding, opts: ViewOptions, model: str) -> str:
    """Why the text report hides f ("" when it shows it), by the first filter that does."""
    test = where_of(f) in NOT_RUNTIME
    if (opts.where == "runtime" and test) or (opts.where == "test" and not test):
        return "where"
    if model and model_of(f) and model_name(model_of(f)) != model:
        return "model"
    # tests are rated low for where they are, not for what they lack: asking for them shows them
    if not opts.show_all and f.severity == "low" and opts.where != "test":
        return "low"
    return ""


def build_view(report: ScanReport, opts: ViewOptions, fixes: bool = True) -> View:
    check_options(opts)
    view = View()
    model = model_name(opts.model) if opts.model else ""
    if model and not any(model_name(model_of(f)) == model for f in report.findings):
        named = sorted({model_of(f) for f in report.findings if model_of(f)})
        some = ", ".join(named[:12]) + (", ..." if len(named) > 12 else "")
        view.notes.append(
            f"--model {opts.model}: no finding is in a file of that model"
            + (f" (models with findings: {some})" if named else "")
        )
    items: list[Item] = []
    new = set(report.diff.new) if report.diff is not None else set()  # shown first, as new
    for i, (f, ti) in enumerate(zip(report.findings, report.finding_targets, strict=True)):
        if i in new or report.is_acknowledged(i):  # the summary counts the acknowledged
            continue
        why = _reason(f, opts, model)
        if why:
            view.hidden[why] += 1
        else:
            items.append(Item(f, ti, subsystem(f)))
    order = {name: i for i, name in enumerate(SUBSYSTEMS)}
    highs = sorted(
        (i for i in items if i.finding.severity == "high"),
        key=lambda i: (order[i.subsystem], i.target, i.finding.path, i.finding.line),
    )
    per: Counter[str] = Counter()
    opening: set[int] = set()  # ids of the items the opening block takes
    for item in highs:
        per[item.subsystem] += 1
        if per[item.subsystem] <= TOP_PER_SUBSYSTEM:
            opening.add(id(item))
            view.top.append(_with_fix(report, item) if fixes else item)
    view.rest = sorted(
        (i for i in items if id(i) not in opening),
        key=lambda i: (
            i.target,
            i.finding.path,
            i.finding.line,
            -severity_rank(i.finding.severity),
            i.finding.rule,
        ),
    )
    if opts.max:
        over = max(view.shown - opts.max, 0)
        view.top = view.top[: opts.max]
        view.rest = view.rest[: max(opts.max - len(view.top), 0)]
        view.hidden["max"] += over
    view.tables = sum(
        1 for i in view.rest if i.finding.rule == "table-missing-arch" and i.finding.severity == "medium"
    )
    return view


def hidden_text(view: View) -> str:
    """`38 low (expected gaps; --all shows them), 7 outside the runtime (...)`; "" if none hidden."""
    labels = {
        "where": "outside the runtime (tests, benchmarks, examples",
        "model": "of other models (",
        "low": "low (expected gaps",
        "max": "past --max (",
    }
    parts = []
    for key, flag in SHOWN_BY.items():
        if view.hidden.get(key):
            label = labels[key]
            sep = "" if label.endswith("(") else "; "
            parts.append(f"{view.hidden[key]} {label}{sep}{flag} shows them)")
    return ", ".join(parts)


def _with_fix(report: ScanReport, item: Item) -> Item:
    """A high table finding the fixer can plan an entry for gets the command that adds it."""
    f = item.finding
    if f.rule != "table-missing-arch" or not f.arch:
        return item
    from capgap.arch import parse_arch
    from capgap.semantic.fixer import plan_fix

    target = report.targets[item.target].target
    try:  # the same planner `capgap fix` runs: it reads (never imports) the one file
        plan = plan_fix([f], Path(target.root), parse_arch(f.arch))
    except Exception:  # noqa: BLE001 - a table the planner cannot take gets no command, not a crash
        return item
    if not plan.entries:
        return item
    # a directory's finding paths are relative to the scanned directory, fix's --path to the
    # checkout's top: an absolute path means the same file to both
    path = str(Path(target.root) / f.path) if target.kind == "path" else f.path
    cmd = ["capgap", "fix", target.spec, "--arch", f.arch, "--only", f.symbol, "--path", path]
    if not _writable(target.kind, Path(target.root)):
        cmd.append("--dry-run")  # fix writes only to a git checkout or an installed dist
    return Item(f, item.target, item.subsystem, shlex.join(cmd))


def _writable(kind: str, root: Path) -> bool:
    if kind == "dist":
        return True
    if kind != "path":
        return False
    here = root.resolve()
    return any(os.path.lexists(p / ".git") for p in (here, *here.parents))
