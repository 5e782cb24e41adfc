"""The statement cut: what it keeps of large functions and blocks, and that findings read through
it stay those of the whole file (gates deep in a block, what a gate guards, line numbers)."""

from __future__ import annotations

import ast
from pathlib import Path

from capgap.arch import parse_arch
from capgap.reading.chunks import select
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

FILLER = "".join(f"        step_{i} = compute_{i}(data)\n" for i in range(30))

# A long function whose gate sits in a long `for` block that names no capability in its header.
DEEP = f"""\
import torch


def tune(data, layers):
    total = 0
    for layer in layers:
{FILLER}        major = torch.cuda.get_device_capability()[0]
        if major == 9:
            total += fast_path(layer)
{FILLER}    return total
"""

# A negative gate early in a long function; what it guards (a tcgen05 kernel) comes 40 lines later.
GUARDED = f"""\
import torch


def run(x):
    if torch.cuda.get_device_capability()[0] != 10:
        return None
{FILLER.replace("        ", "    ")}    out = launch_tcgen05_kernel(x)
    return out
"""


def _scan(tmp_path: Path, source: str, arch: str = "12.0") -> list[tuple[str, int, str, str]]:
    (tmp_path / "mod.py").write_text(source)
    options = ScanOptions(archs=(parse_arch(arch),), use_cache=False, binaries=False)
    report = run_scan([str(tmp_path)], options)
    return [(f.rule, f.line, f.symbol, f.severity) for f in report.findings]


def test_a_large_block_keeps_only_its_relevant_statements_on_their_own_lines() -> None:
    cut = select(DEEP.encode())
    text = cut.text.decode()
    assert text.count("\n") == DEEP.count("\n")  # every line number is kept
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    assert kept == [
        "def tune(data, layers):",
        "for layer in layers:",
        "major = torch.cuda.get_device_capability()[0]",
        "if major == 9:",
        "total += fast_path(layer)",
        "return total",
    ]
    ast.parse(text)  # still Python
    # the function and the block were kept in part: where they end in the file is remembered
    lines = DEEP.splitlines()
    assert cut.ends[lines.index("def tune(data, layers):") + 1] == len(lines)
    assert cut.ends[lines.index("    for layer in layers:") + 1] == len(lines) - 1


def test_an_irrelevant_clause_keeps_a_pass_so_the_cut_still_parses() -> None:
    source = (
        "def f(data):\n    if data:\n"
        + FILLER
        + "    else:\n"
        + FILLER.replace("step_0 = compute_0(data)", "arch = get_arch(data)")
        + "    return arch\n"
    )
    text = select(source.encode()).text.decode()
    tree = ast.parse(text)
    block = tree.body[0].body[0]  # type: ignore[attr-defined]
    assert isinstance(block.body[0], ast.Pass) and block.body[0].lineno == 3
    assert [ast.unparse(s) for s in block.orelse] == ["arch = get_arch(data)"]


def test_a_long_function_named_for_an_arch_is_cut_though_its_body_names_none() -> None:
    """A generated kernel of thousands of lines (`def kernel_vsa_sm90_...`) is not parsed whole
    for the name: its body is cut to its returns (or a `pass`); a shorter one stays whole."""
    body = "".join(f"    x_{i} = cute.arch.thread_idx()[{i}]\n" for i in range(420))
    long_def = "@cute.kernel\ndef kernel_sm90(a):\n" + body + "    return x_0\n"
    cut = select(long_def.encode())
    kept = [line.strip() for line in cut.text.decode().splitlines() if line.strip()]
    assert kept == ["@cute.kernel", "def kernel_sm90(a):", "return x_0"]
    assert cut.ends == {2: long_def.count("\n")}
    no_return = select(long_def.replace("    return x_0\n", "").encode()).text.decode()
    assert [line.strip() for line in no_return.splitlines() if line.strip()][2:] == ["pass"]
    ast.parse(no_return)
    short_def = "def kernel_sm90(a):\n" + body[: body.index("    x_300")]
    assert select(short_def.encode()).text.decode() == short_def


def test_a_gate_deep_in_a_long_block_is_found(tmp_path: Path) -> None:
    line = DEEP.splitlines().index("        if major == 9:") + 1
    assert _scan(tmp_path, DEEP) == [("gate-excludes-arch", line, "major", "medium")]


def test_what_a_gate_guards_is_read_from_the_file_not_from_the_cut(tmp_path: Path) -> None:
    assert "launch_tcgen05_kernel" not in select(GUARDED.encode()).text.decode()
    # the guarded code needs tcgen05, which 12.0 lacks: the gate is rightly closed to it (low)
    assert _scan(tmp_path, GUARDED) == [("gate-excludes-arch", 5, "get_device_capability", "low")]


def test_a_short_assignment_stays_only_when_a_capability_line_reads_its_name() -> None:
    source = (
        "import torch\n\n\ndef f(x):\n    props = torch.cuda.get_device_properties(0)\n"
        "    unrelated = x * 2\n" + FILLER.replace("        ", "    ") + "    if props.major >= 9:\n"
        "        return fast(x)\n    return slow(unrelated)\n"
    )
    kept = [line.strip() for line in select(source.encode()).text.decode().splitlines() if line.strip()]
    assert "props = torch.cuda.get_device_properties(0)" in kept
    assert "unrelated = x * 2" not in kept


def test_a_large_class_keeps_only_the_constants_its_tables_read(tmp_path: Path) -> None:
    settings = "".join(f"    FLAG_{i} = env_bool(False)\n" for i in range(60))
    source = (
        "import torch\n\n\nclass Limits:\n    MiB = 1024 * 1024\n" + settings + "    MAX_BYTES = {\n"
        "        9: 64 * MiB,\n        10: 128 * MiB,\n    }\n\n    def limit(self):\n"
        "        major = torch.cuda.get_device_capability()[0]\n        return self.MAX_BYTES[major]\n"
    )
    kept = [line.strip() for line in select(source.encode()).text.decode().splitlines() if line.strip()]
    assert "MiB = 1024 * 1024" in kept
    assert not any(line.startswith("FLAG_") for line in kept)
    (tmp_path / "mod.py").write_text(source)
    options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, binaries=False)
    (finding,) = run_scan([str(tmp_path)], options).findings
    assert (finding.rule, finding.symbol, finding.missing) == ("table-missing-arch", "Limits.MAX_BYTES", "12")
    assert finding.extra["values"] == {"9": 64 << 20, "10": 128 << 20}


# A model's "architecture" config: `arch` names it, and no line reads it in a test.
MODEL_ARCH = f"""\
import torch


def build(arch: ModelArchConfig, data):
    hidden = arch.ffn_hidden_size
{FILLER.replace("        ", "    ")}    return hidden


def tune(data, arch):
    total = 0
    for layer in data:
{FILLER}        if arch >= 90:
            total += fast_path(layer)
{FILLER}    return torch.cuda.get_device_capability()
"""


def test_names_that_no_test_reads_leave_a_large_function_out(tmp_path: Path) -> None:
    cut = select(MODEL_ARCH.encode())
    kept = [line.strip() for line in cut.text.decode().splitlines() if line.strip()]
    assert kept == [
        "def tune(data, arch):",
        "for layer in data:",
        "if arch >= 90:",
        "total += fast_path(layer)",
        "return torch.cuda.get_device_capability()",
    ]
    line = MODEL_ARCH.splitlines().index("        if arch >= 90:") + 1
    assert _scan(tmp_path, MODEL_ARCH, "8.0") == [("gate-excludes-arch", line, "arch", "medium")]
