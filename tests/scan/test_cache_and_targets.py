"""The content-hash cache, and every kind of target: path, file, wheel, requirement, installed dist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.reading import prefilter, workers
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan
from capgap.targets import resolve_target
from tests.scan.fixture_tree import FILES, write_tree
from tests.wheel_build import build_wheel

OPTS = ScanOptions(archs=(parse_arch("12.0"),), binaries=False)


def _keys(report: object) -> list[tuple[str, str, int, str]]:
    return [(f.rule, f.path, f.line, f.symbol) for f in report.findings]  # type: ignore[attr-defined]


def test_warm_scan_reads_nothing_and_finds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path)
    cold = run_scan([str(tmp_path)], OPTS)
    parsed: list[str] = []
    real = workers.work
    monkeypatch.setattr(workers, "work", lambda item, h=True: parsed.append(item[0]) or real(item, h))
    warm = run_scan([str(tmp_path)], OPTS)
    assert parsed == []
    assert _keys(warm) == _keys(cold) and len(_keys(cold)) == 17
    # a changed file is parsed again, and only that one
    sizes = tmp_path / "toyengine/comm/sizes.py"
    sizes.write_text(sizes.read_text().replace("10: {2:", "12: {2: 1}, 10: {2:"))
    after = run_scan([str(tmp_path)], OPTS)
    assert parsed == ["toyengine/comm/sizes.py"]
    assert "SYMM_MAX_SIZES" not in {f.symbol for f in after.findings}


def test_another_capgap_judges_an_unchanged_tree_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.judging import rules
    from capgap.reading import cache

    write_tree(tmp_path)
    run_scan([str(tmp_path)], OPTS)
    judged: list[int] = []
    real = rules.table_findings
    monkeypatch.setattr(rules, "table_findings", lambda *a: judged.append(1) or real(*a))
    run_scan([str(tmp_path)], OPTS)
    assert judged == []  # the same capgap: the last answer stands
    # an edited or upgraded capgap (its code stamp differs): the facts are reused, the rules run
    monkeypatch.setattr(cache, "code_stamp", lambda: "another-build")
    monkeypatch.setattr("capgap.scan.source.code_stamp", lambda: "another-build")
    parsed: list[str] = []
    real_work = workers.work
    monkeypatch.setattr(workers, "work", lambda item, h=True: parsed.append(item[0]) or real_work(item, h))
    again = run_scan([str(tmp_path)], OPTS)
    assert judged == [1] and parsed == [] and len(_keys(again)) == 17


def test_no_cache_parses_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path)
    run_scan([str(tmp_path)], OPTS)
    parsed: list[str] = []
    real = workers.work
    monkeypatch.setattr(workers, "work", lambda item, h=True: parsed.append(item[0]) or real(item, h))
    run_scan([str(tmp_path)], ScanOptions(archs=OPTS.archs, use_cache=False))
    # every file again, but for Python files without a single capability token (grep's verdict)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    holding = {
        p.relative_to(tmp_path).as_posix()
        for p in files
        if p.suffix != ".py" or prefilter.worth_parsing(p.read_bytes())
    }
    assert sorted(parsed) == sorted(holding) and len(holding) == 8


def test_same_content_elsewhere_is_not_parsed_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path)
    run_scan([str(tmp_path)], OPTS)
    moved = tmp_path / "toyengine/comm/sizes.py"
    moved.rename(tmp_path / "toyengine/comm/limits.py")
    report = run_scan([str(tmp_path)], OPTS)
    assert ("table-missing-arch", "toyengine/comm/limits.py", 3, "SYMM_MAX_SIZES") in _keys(report)


def test_process_pool_gives_the_same_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path)
    serial = run_scan([str(tmp_path)], ScanOptions(archs=OPTS.archs, use_cache=False, jobs=1))
    monkeypatch.setattr(workers, "POOL_MIN_BYTES", 1)
    pooled = run_scan([str(tmp_path)], ScanOptions(archs=OPTS.archs, use_cache=False, jobs=2))
    assert _keys(pooled) == _keys(serial)


def test_chunks_hold_every_file_once_largest_first_in_about_equal_bytes() -> None:
    todo = [(f"f{i}.py", f"/t/f{i}.py") for i in range(40)]
    sizes = {rel: (i % 7 + 1) * 1000 for i, (rel, _) in enumerate(todo)}
    chunks = workers.chunks(todo, sizes, jobs=2)
    flat = [item for chunk in chunks for item in chunk]
    assert sorted(flat) == sorted(todo)
    assert [sizes[rel] for rel, _ in flat] == sorted(sizes.values(), reverse=True)
    total = sum(sizes.values())
    assert len(chunks) >= 2 * 4  # several per worker: none is left alone with a big one
    target = total // (2 * workers.CHUNKS_PER_WORKER)
    assert all(sum(sizes[rel] for rel, _ in chunk) < target + 7000 for chunk in chunks)


def _build_wheel(dest: Path, name: str = "toyengine", version: str = "0.1") -> Path:
    """A wheel of the fixture package."""
    import textwrap

    files = {rel: textwrap.dedent(text).lstrip("\n") for rel, text in FILES.items() if rel.startswith(name)}
    return build_wheel(dest, name, version, files)


def _table_symbols(report: object) -> set[str]:
    return {f.symbol for f in report.findings if f.rule == "table-missing-arch"}  # type: ignore[attr-defined]


EXPECTED_TABLES = {
    "SYMM_MAX_SIZES",
    "SymmComm._MULTIMEM_SIZES",
    "ARCH_BLOCK_CONFIGS",
    "TUNED_TILES",
    "SM_SPLITS",
    "KERNEL_NAMES",
    "pick_stages.stages",
}


def test_wheel_file_target(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    target = resolve_target(str(wheel))
    assert target.kind == "wheel"
    assert _table_symbols(run_scan([str(wheel)], OPTS)) == EXPECTED_TABLES


def test_single_file_target(tmp_path: Path) -> None:
    write_tree(tmp_path)
    report = run_scan([str(tmp_path / "toyengine/kernels/configs.py")], OPTS)
    assert {f.path for f in report.findings} == {"configs.py"}


def test_requirement_target_is_downloaded_not_installed(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    report = run_scan([f"toyengine @ {wheel.as_uri()}"], OPTS)
    assert report.targets[0].target.kind == "requirement"
    assert _table_symbols(report) == EXPECTED_TABLES


@pytest.mark.slow
def test_installed_dist_in_another_environment(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    report = run_scan(["toyengine"], OPTS, python=str(python))
    assert report.targets[0].target.kind == "dist"
    assert _table_symbols(report) == EXPECTED_TABLES
    assert {f.path for f in report.findings if f.symbol == "SYMM_MAX_SIZES"} == {"toyengine/comm/sizes.py"}


def test_an_unwritable_cache_only_costs_speed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path / "tree")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("CAPGAP_CACHE_DIR", str(blocker))
    report = run_scan([str(tmp_path / "tree")], OPTS)
    assert len(report.findings) == 17


def test_environments_and_vcs_data_inside_a_tree_are_not_scanned(tmp_path: Path) -> None:
    write_tree(tmp_path)
    for skipped in (".venv/lib/site-packages/other", ".git/hooks"):
        (tmp_path / skipped).mkdir(parents=True)
        (tmp_path / skipped / "t.py").write_text('ARCH_TILES = {"9.0": 1, "10.0": 2}\n')
    assert {f.path for f in run_scan([str(tmp_path)], OPTS).findings if "t.py" in f.path} == set()


def test_iter_files_lists_what_os_walk_lists_in_its_order(tmp_path: Path) -> None:
    import os

    from capgap.targets import Target, iter_files

    (tmp_path / "b" / "c").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for rel in ("z.py", "a.so", "b/c/k.so", "b/x.txt", ".git/HEAD"):
        (tmp_path / rel).write_text("x")
    (tmp_path / "b" / "link.py").symlink_to(tmp_path / "z.py")
    (tmp_path / "dirlink").symlink_to(tmp_path / "b", target_is_directory=True)
    (tmp_path / "broken").symlink_to(tmp_path / "missing")
    expected = []
    for dirpath, dirnames, filenames in os.walk(tmp_path, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in {".git", "__pycache__", ".hg", ".svn"})
        expected += [Path(dirpath) / fn for fn in sorted(filenames)]
    target = Target(str(tmp_path), "path", tmp_path)
    assert list(iter_files(target)) == expected
    assert [p.name for p in expected] == ["a.so", "broken", "z.py", "link.py", "x.txt", "k.so"]


_NEEDS_TREE = {
    # a kernel module that states its need, a module of its package importing it, and one importing that
    "eng/b.py": '"""Kernels accumulating in tcgen05 TMEM."""\n\n\ndef x():\n    return 1\n',
    "eng/a.py": (
        "import torch\n\nfrom .b import x\n\n\ndef y():\n"
        "    if torch.cuda.get_device_capability()[0] == 10:\n        return x()\n    return 0\n"
    ),
    "eng/c.py": (
        "import torch\n\nfrom .a import y\n\n\ndef z():\n"
        "    if torch.cuda.get_device_capability()[0] == 10:\n        return y()\n    return 1\n"
    ),
}


def _judged(report: object) -> list[tuple[str, int, str, str]]:
    return [(f.path, f.line, f.severity, str(f.extra.get("evidence"))) for f in report.findings]  # type: ignore[attr-defined]


def test_facts_reused_by_another_capgap_judge_as_a_cold_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.reading import cache

    for rel, text in _NEEDS_TREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    cold = run_scan([str(tmp_path)], OPTS)
    # what the first scan passed from module to module is not kept as the module's own need
    monkeypatch.setattr(cache, "code_stamp", lambda: "another-build")
    monkeypatch.setattr("capgap.scan.source.code_stamp", lambda: "another-build")
    warm = run_scan([str(tmp_path)], OPTS)
    assert _judged(warm) == _judged(cold)
