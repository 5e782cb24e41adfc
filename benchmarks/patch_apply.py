"""Re-apply 100 saved patches over 100 files, side by side with `git apply` of the same diffs.

Target (issue 4): at most 1 s, and at most 3x `git apply`. Both run in one process, on the same
tree, alternating, REPS times; the tree and the store are reset between runs (not timed). The
CLI row of the 3-way scenario includes recording the 100 merged patches against the new commit
(patches/rebase.py), which a user's `patch apply` pays once per upstream change. Prints raw samples,
medians, ratios and the environment.

    .venv/bin/python benchmarks/patch_apply.py [--reps 7] [--files 100] [--against OLD/src] [--no-cli]

--against times another capgap source tree (e.g. `git archive main src | tar -x -C /tmp/old`)
in the same rounds, library and CLI, so a change is judged by ratios taken side by side.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)


def source(i: int, lines: int = 200) -> str:
    return "".join(f"VALUE_{i}_{n} = {n}  # line {n}\n" for n in range(lines))


def build(base: Path, nfiles: int) -> tuple[Path, Path, list[Path]]:
    from capgap.patches.store import Store

    repo, store = base / "repo", base / "store"
    (repo / "pkg").mkdir(parents=True)
    for i in range(nfiles):
        (repo / f"pkg/mod{i:03d}.py").write_text(source(i))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    st = Store(store)
    diffs = []
    for i in range(nfiles):
        rel = f"pkg/mod{i:03d}.py"
        pristine = source(i).encode()
        patched = pristine.replace(f"VALUE_{i}_100 = 100".encode(), f"VALUE_{i}_100 = 12000".encode())
        patch = st.save_patch(
            f"p{i:03d}",
            {"kind": "git", "name": "repo", "root": str(repo), "commit": head},
            {rel: (pristine, patched)},
        )
        diffs.append(patch.dir / "patch.diff")
    return repo, store, diffs


def upstream_change(repo: Path, nfiles: int) -> None:
    """A change upstream, 50 lines from each patched line: capgap merges, git apply offsets."""
    for i in range(nfiles):
        path = repo / f"pkg/mod{i:03d}.py"
        path.write_text(path.read_text().replace(f"VALUE_{i}_50 = 50", f"VALUE_{i}_50 = 51"))
    git(repo, "commit", "-qam", "upstream")


def settle(store: Path, seconds: float = 30.0) -> None:
    """Wait until capgap's background deletion of finished runs is done (not timed): it must
    not slow whatever is timed next, git apply included."""
    done = store / ".runs" / ".done"
    deadline = time.monotonic() + seconds
    while done.is_dir() and any(done.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.005)


def snapshot(store: Path) -> Path:
    """A copy of the store as built: `patch apply` records re-applied patches against the new
    upstream (patches/rebase.py), so every rep starts from the same store (not timed)."""
    import shutil

    copy = store.with_name(store.name + ".snapshot")
    shutil.copytree(store, copy, symlinks=True)
    return copy


def reset(repo: Path, store: Path | None = None) -> None:
    if store is not None:
        import shutil

        settle(store)
        copy = store.with_name(store.name + ".snapshot")
        if copy.is_dir():
            shutil.rmtree(store)
            shutil.copytree(copy, store, symlinks=True)
    git(repo, "checkout", "-q", "--", ".")
    # A real tree has been on disk for a while: flush it, so that neither tool is timed
    # replacing files whose blocks were never allocated (ext4 delayed allocation makes that free).
    os.sync()


def time_capgap(repo: Path, store: Path) -> float:
    from capgap.patches.apply import apply_patches, select
    from capgap.patches.detect import resolve
    from capgap.patches.run import session
    from capgap.patches.store import Store

    t0 = time.perf_counter()
    st = Store(store)
    target = resolve(str(repo))
    with session(st, target):
        results = apply_patches(st, target, select(st, target))
    elapsed = time.perf_counter() - t0
    assert all(r.outcome in {"applied", "merged"} for r in results), {r.outcome for r in results}
    return elapsed


def time_cli(repo: Path, store: Path, src: Path | None = None) -> float:
    env = None if src is None else {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "capgap", "patch", "apply", str(repo), "--store", str(store)],
        check=True,
        capture_output=True,
        env=env,
    )
    return time.perf_counter() - t0


_LIBRARY_RUN = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import capgap.patches.run, capgap.patches.status  # imports are not timed (as in-process,
import concurrent.futures, platformdirs  # where only the first rep pays the lazy ones)
from patch_apply import time_capgap
print(time_capgap(Path(sys.argv[3]), Path(sys.argv[4])))
"""


def time_library_of(src: Path, repo: Path, store: Path) -> float:
    """The library of another source tree, timed inside a process of its own."""
    here = str(Path(__file__).resolve().parent)
    cmd = [sys.executable, "-c", _LIBRARY_RUN, str(src), here, str(repo), str(store)]
    out = subprocess.run(
        cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""}
    )
    return float(out.stdout.strip())


def time_git_apply(repo: Path, diffs: list[Path]) -> float:
    t0 = time.perf_counter()
    subprocess.run(["git", "apply", *map(str, diffs)], cwd=repo, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--against", type=Path, help="another capgap src/ directory, timed alongside")
    ap.add_argument("--no-cli", action="store_true", help="library rows only (no typer needed)")
    args = ap.parse_args()
    here = Path(__file__).resolve().parents[1] / "src"
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"python {platform.python_version()}, {git_version}, {os.cpu_count()} cpus, "
        f"load {os.getloadavg()[0]:.1f}, {args.files} patches over {args.files} files, {args.reps} reps"
    )
    with tempfile.TemporaryDirectory(prefix="capgap-bench-") as tmp:
        repo, store, diffs = build(Path(tmp), args.files)
        snapshot(store)
        for scenario in ("exact (tree == pristine)", "3-way (upstream changed each file)"):
            if scenario.startswith("3-way"):
                upstream_change(repo, args.files)
            runs = {
                "capgap (library)": lambda: time_capgap(repo, store),
                "capgap (CLI process)": lambda: time_cli(repo, store, here),
                "git apply": lambda: time_git_apply(repo, diffs),
            }
            if args.against:
                # both libraries in a process of their own, so that neither is favoured
                runs["capgap (library)"] = lambda: time_library_of(here, repo, store)
                runs["against (library)"] = lambda: time_library_of(args.against.resolve(), repo, store)
                runs["against (CLI process)"] = lambda: time_cli(repo, store, args.against.resolve())
            if args.no_cli:
                runs = {name: run for name, run in runs.items() if "CLI" not in name}
            samples: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(args.reps):
                for name, run in runs.items():
                    reset(repo, store)
                    samples[name].append(run())
            reset(repo, store)
            base = statistics.median(samples["git apply"])
            print(f"\n{scenario}")
            for name, values in samples.items():
                med = statistics.median(values)
                spread = (max(values) - min(values)) / med if med else 0.0
                raw = " ".join(f"{v * 1000:.0f}" for v in values)
                warn = "  (spread > 50%: busy machine?)" if spread > 0.5 else ""
                ratio = med / base
                print(
                    f"  {name:23s} median {med * 1000:7.1f} ms  {ratio:5.2f}x git apply   raw ms: {raw}{warn}"
                )


if __name__ == "__main__":
    main()
