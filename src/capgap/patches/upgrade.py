"""`capgap upgrade TARGET -- CMD`: save every local change, put the pristine files back, run
CMD, re-apply every patch, and report versions before/after and each patch's outcome.

One journal covers the whole run (phases restore -> cmd -> reapply): a crash during `restore`
is rolled back by the next run; after `cmd` began, the next run re-applies the saved patches.
If CMD fails, or a patch conflicts under --rollback-on-conflict, the pre-upgrade state is put
back: reapply writes undone, the command undone (git reset to the old commit / pip reinstall of
the old version), local edits written back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

from capgap.errors import EnvironmentProblem, StoreError, UsageError
from capgap.patches.apply import PatchResult, apply_patches, select
from capgap.patches.detect import PatchTarget, git, local_changes, resolve
from capgap.patches.journal import Journal
from capgap.patches.pristine import Pristine
from capgap.patches.rebase import rebase
from capgap.patches.recall import resolve_recalled
from capgap.patches.run import session
from capgap.patches.save import save_changes, uncovered
from capgap.patches.staging import Staging
from capgap.patches.store import Store


@dataclass
class UpgradeReport:
    target: str
    versions_before: dict[str, str]
    versions_after: dict[str, str] = field(default_factory=dict)
    saved: str | None = None
    command_rc: int | None = None
    command_output: str = ""
    results: list[PatchResult] = field(default_factory=list)
    rolled_back: str | None = None  # why the pre-upgrade state was restored
    messages: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the environment used, patches rebased

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target,
            "versions_before": self.versions_before,
            "versions_after": self.versions_after,
            "saved_patch": self.saved,
            "command_rc": self.command_rc,
            "rolled_back": self.rolled_back,
            "patches": [r.to_json() for r in self.results],
            "messages": self.messages,
            "notes": self.notes,
        }


def versions(target: PatchTarget, python: str | None = None) -> dict[str, str]:
    """The stack inventory's versions of the target's environment (an installed dist's, or the
    one --python names for a checkout; a checkout alone has none: capgap's own torch is not the
    engine's), and the target's own version or commit."""
    out: dict[str, str] = {}
    python = target.python if target.kind == "dist" else python
    stack = None
    if target.kind == "dist" or python:
        from capgap.probe.stack import inventory

        try:
            stack = inventory(python=python)
        except Exception:  # the probe failing must not stop an upgrade: fall back to our own
            stack = None
    if stack is not None:
        for name, pkg in {**stack.components(), **stack.nccl()}.items():
            out[name] = pkg.version
    if target.version:
        out.setdefault(target.name, target.version)
    if target.commit:
        out[f"{target.name} (git HEAD)"] = target.commit[:12]
    return out


def _undo_command(before: PatchTarget, python: str | None) -> None:
    if before.kind == "git":
        git(before.root, "reset", "--hard", "-q", str(before.commit))
        return
    # capgap's own pip, isolated (no `./pip/` from the working directory)
    pip = [sys.executable, "-I", "-m", "pip"] + (["--python", python] if python else [])
    wheel = Pristine(before, Store(os.devnull)).wheel()
    what = (
        os.path.abspath(wheel.filename)
        if wheel is not None and wheel.filename
        else f"{before.name}=={before.version}"
    )
    proc = subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--force-reinstall", str(what)],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",  # a neutral directory (the wheel's path is absolute)
    )
    if proc.returncode != 0:
        raise EnvironmentProblem(f"could not reinstall {before.label()}: {proc.stderr.strip()[-300:]}")


def _run(cmd: list[str], cwd: str | None) -> tuple[int, str]:
    """Run the upgrade command with its output shown as it comes (on stderr, so `--format json`
    stays clean), between two lines of capgap's own; returns its exit code and its output's tail."""
    import shlex
    from collections import deque

    from capgap import output

    env = {k: v for k, v in os.environ.items() if k != "CAPGAP_CRASH_AT"}
    shown = shlex.join(cmd)
    output.info(f"capgap: running {shown}")
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=200)
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
    except OSError as exc:
        output.info(f"capgap: cannot run {shown}: {exc}")
        return 127, str(exc)
    assert proc.stdout is not None
    for line in proc.stdout:
        output.passthrough(line)
        tail.append(line)
    rc = proc.wait()
    output.info(f"capgap: {shown} exited with {rc} after {time.monotonic() - started:.1f} s")
    return rc, "".join(tail)[-4000:]


def upgrade(
    store: Store,
    spec: str,
    cmd: list[str],
    *,
    python: str | None = None,
    name: str | None = None,
    rollback_on_conflict: bool = False,
    markers: bool = False,
) -> UpgradeReport:
    if not cmd:
        raise UsageError("give the upgrade command after `--`, e.g. capgap upgrade . -- git pull")
    target, recalled = resolve_recalled(store, spec, python)
    python = target.python if target.kind == "dist" else python
    with session(store, target) as messages:
        report = UpgradeReport(target.label(), versions(target, python), messages=list(messages))
        report.notes += [recalled] if recalled else []
        changes, skipped = local_changes(target, exclude=store.path)
        if skipped:  # its local change, if any, could be neither saved nor put back
            unread = "; ".join(f"{s.path}: {s.reason}" for s in skipped)
            raise StoreError(f"refusing to upgrade: {len(skipped)} file(s) cannot be read ({unread})")
        new = uncovered(store, target, changes)
        if new:
            patch_name = name or time.strftime("upgrade-%Y%m%d-%H%M%S", time.gmtime())
            patch, warnings = save_changes(store, target, patch_name, new)
            report.saved, report.messages = patch.name, report.messages + warnings
        if uncovered(store, target, changes):
            raise StoreError("some local changes are not saved in any patch; refusing to upgrade")
        pristine = Pristine(target, store)
        restore = [
            (rel, cur, pristine.get(rel) if up is not None else None) for rel, (up, cur) in changes.items()
        ]
        journal = Journal.start(
            store.run_dir(target.root),
            target.root,
            "upgrade",
            commit=target.commit,
            version=target.version,
            store=os.path.realpath(store.path),  # a next run under another store re-applies these
        )
        rels = [rel for rel, _cur, _up in restore]
        staging = Staging.record(target.root, rels) if target.kind == "git" and restore else None
        journal.phase("restore")
        journal.write_files(restore)
        if staging is not None:  # staged edits would make `git pull` refuse just the same
            staging.unstage(rels)
        journal.phase("cmd")
        report.command_rc, report.command_output = _run(
            cmd, str(target.root) if target.kind == "git" else None
        )
        if report.command_rc != 0:
            report.messages += journal.rollback()
            if staging is not None:
                staging.put_back()
            journal.finish()
            report.rolled_back = f"the command failed (exit {report.command_rc})"
            report.versions_after = report.versions_before
            return report
        after = resolve(spec, python)
        journal.phase("reapply")
        patches = select(store, after)
        report.results = apply_patches(store, after, patches, markers=markers, journal=journal)
        if rollback_on_conflict and any(r.outcome == "conflict" for r in report.results):

            def undo(phase: str) -> None:
                if phase == "cmd":
                    _undo_command(target, python)

            report.messages += journal.rollback(on_phase=undo)
            if staging is not None:
                staging.put_back()
            report.rolled_back = "a patch conflicted (--rollback-on-conflict)"
            after = resolve(spec, python)
        elif staging is not None:
            report.messages += staging.restage(report.results)
        journal.finish()
        if not report.rolled_back:
            report.notes += rebase(store, after, patches, report.results)
        report.versions_after = versions(after, python)
        return report
