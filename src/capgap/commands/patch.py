"""`capgap patch save|list|show|apply|drop|edit|commit`: keep local fixes as durable patches."""

from __future__ import annotations

from pathlib import Path

import typer

from capgap.commands import finish
from capgap.output import Format

patch_app = typer.Typer(help="Keep local patches to an engine across upgrades.", no_args_is_help=True)

STORE = typer.Option(
    None, "--store", help="Patch store directory (default $CAPGAP_STORE or ./capgap-patches)."
)
PYTHON = typer.Option(None, "--python", help="Interpreter whose environment holds the distribution.")


def _text_or_json(value):  # noqa: ANN001, ANN202 - typer passes an unannotated callback's parameter the value
    from capgap.commands import text_or_json

    text_or_json(value, "patch")
    return getattr(value, "value", value)  # the string: typer converts the returned value again


FORMAT = typer.Option(
    Format.text, "--format", metavar="<text|json>", help="text or json.", callback=_text_or_json
)
STRICT = typer.Option(False, "--strict", help="Warnings (other version, ...) are failures: exit 1.")


def _store(option: str | None):  # -> Store
    from capgap.patches.store import Store, store_dir

    return Store(store_dir(option))


@patch_app.command("save")
def save(
    name: str = typer.Argument(..., help="Name of the new patch."),
    target: str = typer.Argument(..., help="A git checkout directory or an installed distribution name."),
    for_range: str | None = typer.Option(None, "--for", help='Version range, e.g. "sglang>=0.5.9,<0.6".'),
    note: str = typer.Option("", "--note", help="A note stored with the patch."),
    force: bool = typer.Option(False, "--force", help="Replace an existing patch of that name."),
    store: str | None = STORE,
    python: str | None = PYTHON,
    fmt: Format = FORMAT,
) -> None:
    """Save the target's local changes (not yet in another patch) as patch NAME."""
    from capgap import output
    from capgap.errors import UsageError
    from capgap.patches.detect import local_changes
    from capgap.patches.recall import resolve_recalled
    from capgap.patches.run import session
    from capgap.patches.save import check_for_range, save_changes, uncovered

    st = _store(store)
    tgt, recalled = resolve_recalled(st, target, python)
    if recalled:
        output.info(recalled)
    if for_range:
        check_for_range(for_range, tgt)
    with session(st, tgt) as messages:
        found, skipped = local_changes(tgt, exclude=st.path)
        changes = uncovered(st, tgt, found, replacing=name if force else None)
        if not changes:
            unread = "".join(f"; skipped {s.path}: {s.reason}" for s in skipped)
            raise UsageError(f"no local changes in {tgt.label()} that aren't saved already{unread}")
        patch, warnings = save_changes(st, tgt, name, changes, for_range=for_range, note=note, replace=force)
    for msg in messages + warnings:
        output.warn(msg)
    if fmt == Format.json:
        output.emit_json({**patch.to_json(), "skipped": [s.to_json() for s in skipped]})
    else:
        output.show(
            f"saved patch [bold]{patch.name}[/bold] ({len(patch.files)} file(s)) for {tgt.label()} "
            f"in {st.path}"
        )
        for s in skipped:
            output.warn(f"skipped {s.path}: {s.reason} (not saved)")
    finish(1 if skipped else 0)


@patch_app.command("list")
def list_(store: str | None = STORE, python: str | None = PYTHON, fmt: Format = FORMAT) -> None:
    """List saved patches and their status against what is installed now."""
    from capgap import output
    from capgap.patches.status import statuses

    st = _store(store)
    rows = statuses(st, python)
    if fmt == Format.json:
        output.emit_json({"patches": rows})
    elif not rows:
        output.info(f"no saved patches in {st.path}")
    else:
        output.table(
            None,
            ("name", "target", "files", "base", "for", "status"),
            [(r["name"], r["target"], r["files"], r["base"], r["for"] or "", r["status"]) for r in rows],
        )
    finish(0)


@patch_app.command("show")
def show(name: str = typer.Argument(...), store: str | None = STORE, fmt: Format = FORMAT) -> None:
    """Show a saved patch's diff (coloured)."""
    from capgap import output

    patch = _store(store).load(name)
    if patch.stored_diff_differs():  # the diff below is made from what `apply` writes
        output.warn(
            f"patch {name}: its patch.diff does not match its stored copies; showing what `apply` writes"
        )
    if fmt == Format.json:
        output.emit_json({**patch.to_json(), "diff": patch.diff_text()})
        finish(0)
    target = patch.target
    header = (
        f"[bold]{patch.name}[/bold]: {target.get('kind')} {target.get('name')} "
        f"{target.get('version') or (target.get('commit') or '')[:12]}  created {patch.meta.get('created')}"
    )
    if not output.stdout_is_terminal():  # `> fix.diff`, `| git apply`: the diff alone, byte for byte
        output.info(header)
        output.raw(patch.diff_text())
        finish(0)
    from rich.syntax import Syntax

    output.show(header)
    output.show(Syntax(patch.diff_text(), "diff", theme="ansi_dark", background_color="default"))
    finish(0)


@patch_app.command("drop")
def drop(name: str = typer.Argument(...), store: str | None = STORE) -> None:
    """Delete a saved patch from the store (the target is not touched)."""
    from capgap import output

    st = _store(store)
    with st.lock():  # unfinished runs keep their backups with the target: none needs this store's copies
        st.drop(name)
    output.show(f"dropped patch {name}")
    finish(0)


@patch_app.command("apply")
def apply(
    target: str | None = typer.Argument(None, help="Target; default: every patch's own target."),
    reverse: bool = typer.Option(False, "--reverse", help="Take the patches back out."),
    conflict: str = typer.Option("untouched", "--conflict", help="untouched | markers"),
    only: list[str] | None = typer.Option(None, "--patch", help="Apply only this patch (repeatable)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report outcomes, write nothing."),
    strict: bool = STRICT,
    store: str | None = STORE,
    python: str | None = PYTHON,
    fmt: Format = FORMAT,
) -> None:
    """Re-apply saved patches: applied-already, applied, merged, semantic, upstreamed or conflict."""
    from capgap import output
    from capgap.errors import UsageError
    from capgap.patches.report import exit_code, print_results
    from capgap.patches.status import apply_all

    if conflict not in {"untouched", "markers"}:
        raise UsageError("--conflict must be 'untouched' or 'markers'")
    st = _store(store)
    runs = apply_all(
        st,
        target,
        python,
        only or None,
        reverse=reverse,
        markers=conflict == "markers",
        dry_run=dry_run,
    )
    results = [r for _t, rs, _m, _n in runs for r in rs]
    for _t, _rs, messages, notes in runs:
        for note in notes:
            output.info(note)
        for msg in messages:
            output.warn(msg)
    damaged = st.damaged  # passed over by apply_all: the other patches were applied
    for why in damaged.values():
        output.warn(f"{why}; not applied (`capgap patch drop` removes it)")
    if fmt == Format.json:
        output.emit_json(
            {
                "targets": [
                    {"target": t.desc(), "patches": [r.to_json() for r in rs], "messages": m, "notes": n}
                    for t, rs, m, n in runs
                ],
                "reverse": reverse,
                "dry_run": dry_run,
                "damaged": damaged,
            }
        )
    else:
        for tgt, rs, _m, _n in runs:
            if rs:
                print_results(rs, f"{'reverse ' if reverse else ''}apply on {tgt.label()}")
    finish(max(exit_code(results, strict), 1 if damaged else 0))


@patch_app.command("edit")
def edit(
    dist: str = typer.Argument(..., help="An installed distribution."),
    directory: Path | None = typer.Option(None, "--dir", help="Edit directory to create."),
    store: str | None = STORE,
    python: str | None = PYTHON,
) -> None:
    """Extract DIST's pristine files into an edit directory (then `capgap patch commit DIR`)."""
    from capgap import output
    from capgap.patches.edit import edit as do_edit

    dest = do_edit(_store(store), dist, python, directory)
    output.show(f"pristine files of {dist} are in {dest}\nedit them, then: capgap patch commit {dest}")
    finish(0)


@patch_app.command("commit")
def commit(
    directory: Path = typer.Argument(..., help="An edit directory made by `capgap patch edit`."),
    name: str | None = typer.Option(None, "--name", help="Patch name (default: the distribution's)."),
    for_range: str | None = typer.Option(None, "--for", help="Version range the patch is for."),
    note: str = typer.Option("", "--note"),
    force: bool = typer.Option(False, "--force", help="Replace an existing patch of that name."),
    strict: bool = STRICT,
    store: str | None = STORE,
    fmt: Format = FORMAT,
) -> None:
    """Turn the edits in DIR into a stored patch and apply it to the installed distribution."""
    from capgap import output
    from capgap.patches.edit import commit as do_commit
    from capgap.patches.report import exit_code, print_results

    patch, results, messages = do_commit(_store(store), directory, name, for_range, note, force)
    for msg in messages:
        output.warn(msg)
    if fmt == Format.json:
        output.emit_json({"patch": patch.to_json(), "results": [r.to_json() for r in results]})
    else:
        output.show(f"saved patch [bold]{patch.name}[/bold] ({len(patch.files)} file(s))")
        print_results(results, "apply")
    finish(exit_code(results, strict))


def register(app: typer.Typer) -> None:
    app.add_typer(patch_app, name="patch")
