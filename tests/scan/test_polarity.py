"""Gate polarity (`!=`, `not in`, `not (...)`) and tables of refusals, with exact expected findings."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import parse_arch
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

GATES = """\
import torch


def pick(sm_version):
    transposed = sm_version != 90
    hopper_only = sm_version == 90
    not_hopper = not (sm_version == 90)
    return transposed, hopper_only, not_hopper


def run(x):
    major = torch.cuda.get_device_capability()[0]
    if major != 9:
        return None
    return x


def check():
    major = torch.cuda.get_device_capability()[0]
    assert major != 9
    return 1


def other(unsupported):
    major = torch.cuda.get_device_capability()[0]
    if major != 9:
        unsupported.append(major)
    return 2


def unless(x):
    major = torch.cuda.get_device_capability()[0]
    if not major in (9, 10):
        raise RuntimeError("needs 9 or 10")
    return x


def keep(x):
    major = torch.cuda.get_device_capability()[0]
    assert major in (9, 10)
    return x


def fusable():
    ok = torch.cuda.get_device_capability() < (12, 0)
    return ok
"""

REFUSALS = """\
import torch

REFUSED_CAPABILITY_REASONS: dict[tuple[int, int], str] = {
    (10, 3): "int8 tensor cores are slow here",
}

_SLOW_ARCHS = {(10, 3): "int8 is slow", (10, 0): "int8 is slow"}

TILE_SIZES = {(9, 0): 128, (10, 0): 256}


def reason(capability):
    return REFUSED_CAPABILITY_REASONS.get(capability, "no code for it")


def pick():
    capability = torch.cuda.get_device_capability()
    if capability in _SLOW_ARCHS:
        raise RuntimeError(_SLOW_ARCHS[capability])
    return TILE_SIZES[capability]
"""

_OFF_HOPPER = "10.0, 10.3, 11.0, 12.0, 12.1"


def _findings(root: Path, arch: str) -> set[tuple[str, str, str, int, str, str]]:
    options = ScanOptions(archs=(parse_arch(arch),), use_cache=False, binaries=False)
    report = run_scan([str(root)], options)
    return {(f.rule, f.severity, f.path, f.line, f.symbol, f.message) for f in report.findings}


def _tree(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / name).write_text(text)
    return tmp_path


def test_a_negated_test_excludes_the_arch_it_names_not_the_others(tmp_path: Path) -> None:
    """`flag = arch != 90` and `assert major != 9` are true on 12.0: they exclude 9.0, not 12.0.

    `ok = cap < (12, 0)` is false on 12.0: it does exclude 12.0.
    `if major != 9: return`, `if major != 9: unsupported.append(...)` and `if not major in ...: raise`
    turn the other archs away: what they guard runs on 9 (and 10) only; a raise or a failed assert
    on 12.0 is high.
    """
    root = _tree(tmp_path, "gates.py", GATES)
    ex, med, high, p, cap = "gate-excludes-arch", "medium", "high", "pkg/gates.py", "get_device_capability"
    assert _findings(root, "12.0") == {
        (
            ex,
            med,
            p,
            6,
            "sm_version",
            "sm_version leaves 12.0 out: 9.0 sets hopper_only = True, 12.0 leaves hopper_only False",
        ),
        # Hopper-only paths every 10.x GPU is refused too: the generation's rule, low
        (ex, "low", p, 13, "major", "major leaves 12.0 out: 9.0 carries on (returns x), 12.0 returns None"),
        (ex, "low", p, 26, "major", "major leaves 12.0 out: 9.0 skips the branch, 12.0 calls append()"),
        # a raise that says what it needs is a clear refusal (medium); a bare failed assert is high
        (
            ex,
            med,
            p,
            33,
            "major",
            "major leaves 12.0 out: 9.0, 10.0, 10.3 carries on (returns x), 12.0 raises RuntimeError "
            "'needs 9 or 10'",
        ),
        (
            ex,
            high,
            p,
            40,
            "major",
            "major leaves 12.0 out: 9.0, 10.0, 10.3 continues, 12.0 fails the assert (AssertionError)",
        ),
        (
            ex,
            med,
            p,
            45,
            cap,
            f"{cap} leaves 12.0 out: 9.0, 10.0, 10.3, 11.0 sets ok = True, 12.0 leaves ok False",
        ),
    }
    assert _findings(root, "9.0") == {
        # what every GPU but Hopper gets, older and newer alike, lacking the wgmma Hopper has: their
        # way, not a path Hopper misses (low); still read as leaving 9.0 out
        (
            ex,
            "low",
            p,
            5,
            "sm_version",
            f"sm_version leaves 9.0 out: {_OFF_HOPPER} sets transposed = True, 9.0 leaves transposed False",
        ),
        (
            ex,
            "low",
            p,
            7,
            "sm_version",
            f"sm_version leaves 9.0 out: {_OFF_HOPPER} sets not_hopper = True, 9.0 leaves not_hopper False",
        ),
        (
            ex,
            high,
            p,
            20,
            "major",
            f"major leaves 9.0 out: {_OFF_HOPPER} continues, 9.0 fails the assert (AssertionError)",
        ),
    }


def test_a_table_of_refusals_lacking_the_arch_is_no_gap(tmp_path: Path) -> None:
    """Refusals known by name (REFUSED_...) or by use (`if cap in T: raise`) are left out."""
    root = _tree(tmp_path, "refusals.py", REFUSALS)
    assert _findings(root, "12.0") == {
        (
            "table-missing-arch",
            "high",
            "pkg/refusals.py",
            9,
            "TILE_SIZES",
            "TILE_SIZES has entries for (9, 0), (10, 0) but none for 12.0: add (12, 0)",
        )
    }


def test_a_hit_that_returns_true_or_a_value_is_a_support_table(tmp_path: Path) -> None:
    """`if cap in T: return True` / `return T[cap]` read a table of what is supported: still a gap."""
    text = (
        "import torch\n\nFAST_PATH = {(9, 0): 1, (10, 0): 2}\n\n\n"
        "def fast():\n    cap = torch.cuda.get_device_capability()\n"
        "    if cap in FAST_PATH:\n        return True\n    return False\n"
    )
    root = _tree(tmp_path, "support.py", text)
    assert {(f[0], f[3], f[4]) for f in _findings(root, "12.0")} == {("table-missing-arch", 3, "FAST_PATH")}
