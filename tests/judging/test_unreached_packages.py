"""A package the engine imports only under a test the target fails is code the target never runs
(vLLM's vendored `third_party/tml_fa4`, imported only where `_use_sheared_bias()` holds, majors
10 and 11): a finding inside it is low and says where the package is imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.judging.gatedimports import read

from .test_decisions import _scan

_FORK = """
import torch


def _get_device_arch():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def forward(q, k, v, page_table=None):
    arch = _get_device_arch()
    if arch // 10 == 9:
        kernel = ForwardSm90(q, k, v, page_table)
    elif arch // 10 == 10:
        kernel = ForwardSm100(q, k, v, page_table)
    elif arch // 10 == 12:
        assert page_table is None, "Paged KV not supported on SM 12.0"
        kernel = ForwardSm120(q, k, v)
    else:
        raise ValueError(f"Unsupported compute capability: {arch}")
    return kernel()
"""

_CALLER = """
import torch


def _use_fork():
    return torch.cuda.get_device_capability()[0] in (10, 11)


class RelAttention:
    def run(self, q, table):
        if _use_fork():
            from eng.third_party.fork import forward
        else:
            from eng.attn.cute import forward
        return forward(q, q, q, page_table=table)
"""


def _tree(extra: dict[str, str] | None = None) -> dict[str, str]:
    files = {
        "eng/__init__.py": "",
        "eng/third_party/__init__.py": "",
        "eng/third_party/fork/__init__.py": "from .interface import forward\n",
        "eng/third_party/fork/interface.py": _FORK,
        "eng/models/rel/ops.py": _CALLER,
    }
    return {**files, **(extra or {})}


def _refusals(found: list) -> list[tuple[str, str]]:
    return [(f.severity, f.path) for f in found if f.rule == "branch-refuses-feature"]


def test_a_package_imported_only_under_a_test_the_target_fails_is_never_run(tmp_path: Path) -> None:
    found = _scan(tmp_path, _tree())
    assert _refusals(found) == [("low", "eng/third_party/fork/interface.py")]
    (refusal,) = [f for f in found if f.rule == "branch-refuses-feature"]
    assert refusal.extra["unreached"] == (
        "eng.third_party.fork is imported only at eng/models/rel/ops.py:11, under `_use_fork()`, "
        "which 12.0 fails"
    )


def test_without_grep_the_files_are_read_in_python_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPGAP_GREP", "0")
    found = _scan(tmp_path, _tree({"eng/tools/bench.py": "from eng.third_party.fork import forward\n"}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]
    found = _scan(tmp_path / "b", _tree())
    assert _refusals(found) == [("low", "eng/third_party/fork/interface.py")]


def test_one_import_at_module_level_elsewhere_keeps_it_reached(tmp_path: Path) -> None:
    # a module the prefilter passes over (no arch word in it) still loads the package
    found = _scan(tmp_path, _tree({"eng/tools/bench.py": "from eng.third_party.fork import forward\n"}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]


def test_an_import_in_a_function_without_a_test_keeps_it_reached(tmp_path: Path) -> None:
    lazy = "def load():\n    from eng.third_party import fork\n    return fork\n"
    found = _scan(tmp_path, _tree({"eng/tools/loader.py": lazy}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]


def test_a_test_the_target_passes_keeps_it_reached(tmp_path: Path) -> None:
    found = _scan(tmp_path, _tree({"eng/models/rel/ops.py": _CALLER.replace("(10, 11)", "(10, 11, 12)")}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]


def test_the_gated_imports_a_module_makes() -> None:
    text = _CALLER.lstrip("\n")
    gated, top = read(text, text.splitlines(), "eng.models.rel.ops", False)
    # the `else:` import is under no test that can be read: not kept
    assert gated == ("11\t_use_fork()\teng.third_party.fork,eng.third_party.fork.forward",)
    assert top == ("torch",)


def test_a_module_imported_only_under_a_failed_test_is_never_run(tmp_path: Path) -> None:
    # one module, not a package: `eng/attn/kernels/blackwell.py`, imported under `_use_fork()`
    files = {
        "eng/__init__.py": "",
        "eng/attn/__init__.py": "",
        "eng/attn/kernels/__init__.py": "",
        "eng/attn/kernels/blackwell.py": _FORK,
        "eng/attn/kernels/common.py": "",
        # the package is loaded at module level: only the module stays unreached
        "eng/attn/cute.py": "from eng.attn.kernels import common\n\nFORWARD = common\n",
        "eng/models/rel/ops.py": _CALLER.replace("eng.third_party.fork", "eng.attn.kernels.blackwell"),
    }
    found = _scan(tmp_path, files)
    assert _refusals(found) == [("low", "eng/attn/kernels/blackwell.py")]
    (refusal,) = [f for f in found if f.rule == "branch-refuses-feature"]
    assert refusal.extra["unreached"].startswith("eng.attn.kernels.blackwell is imported only at")


def test_a_package_imported_by_name_in_a_string_may_be_loaded_anywhere(tmp_path: Path) -> None:
    # a registry's `import_module(f"eng.third_party.{name}")`: no import statement names the package
    registry = (
        "import importlib\n\n\ndef load(name):\n"
        '    return importlib.import_module(f"eng.third_party.{name}")\n'
    )
    found = _scan(tmp_path, _tree({"eng/registry.py": registry}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]


def test_a_test_no_arch_decides_says_nothing_of_the_target(tmp_path: Path) -> None:
    # `if _FORK_ENABLED:` (a constant): every GPU skips it alike; the arch is not why
    caller = _CALLER.replace("if _use_fork():", "if _FORK_ENABLED:").replace(
        "class RelAttention:", "_FORK_ENABLED = False\n\n\nclass RelAttention:"
    )
    found = _scan(tmp_path, _tree({"eng/models/rel/ops.py": caller}))
    assert _refusals(found) == [("medium", "eng/third_party/fork/interface.py")]


def test_a_grep_that_cannot_start_is_read_in_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from capgap.reading import mentions

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError("E2BIG")

    monkeypatch.setattr(mentions.subprocess, "run", refuse)
    found = _scan(tmp_path, _tree())
    assert _refusals(found) == [("low", "eng/third_party/fork/interface.py")]
