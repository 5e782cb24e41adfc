"""A private function whose every call sits past a refusal of the target is never run there
(judging.callsites, rules._called_past_refusals): FlashInfer 0.7.4's `_pick_tile` picks a 10.x
occupancy tile, but its one caller is called only past `if major != 10: raise`."""

from __future__ import annotations

from pathlib import Path

from capgap.judging import callsites
from tests.judging.test_decisions import _scan

_DECODE = """
import torch


def _pick_tile(T, heads, sm_count, capability):
    if T == 1:
        return (4, 1)
    if capability in ((10, 0), (10, 3)) and sm_count < heads:
        tile = (2, 16)
    else:
        tile = (4, 8)
    return tile


def _run(
    x,
    out,
):
    capability = torch.cuda.get_device_capability(x.device)
    R, K = _pick_tile(x.shape[0], 8, 148, capability)
    return _launch(x, out, R, K)


def run_decode(x, out):
    major, _ = torch.cuda.get_device_capability(x.device)
    if major != 10:
        raise NotImplementedError("packed decode currently requires SM10x")
{more}    _run(x, out)
    return out
"""


def test_a_pick_called_only_past_a_refusal_is_never_reached(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/decode.py": _DECODE.format(more="")})
    # only the refusal itself, where 12.0 is turned away
    assert [(f.line, f.rule) for f in found] == [(25, "gate-excludes-arch")]
    assert "raises NotImplementedError" in found[0].message


def test_a_call_before_the_refusal_keeps_the_pick_reached(tmp_path: Path) -> None:
    code = _DECODE.format(more="").replace("    major, _ = torch", "    _run(x, out)\n    major, _ = torch")
    lines = sorted(f.line for f in _scan(tmp_path, {"eng/decode.py": code}))
    assert lines[0] == 7  # the pick's own decision, judged as before


def test_a_function_handed_on_uncalled_has_callers_it_cannot_see(tmp_path: Path) -> None:
    code = _DECODE.format(more="    POOL.submit(_run, x, out)\n")
    assert 7 in {f.line for f in _scan(tmp_path, {"eng/decode.py": code})}


def test_callers_are_read_across_multi_line_signatures_and_docstrings() -> None:
    text = '''
def _helper(a):
    return a


def outer(
    x,
):
    """Calls
_helper lies here only in words.
    """
    return _helper(x)


class Runner:
    @staticmethod
    def _step(x):
        return x

    def run(self, x):
        return self._step(_helper(x))
'''
    found = callsites.read(text)
    # `_helper` is named in a docstring: whatever calls it there cannot be seen
    assert "_helper" not in found
    assert found["_step"] == (("Runner.run", 21),)


def test_a_registering_decorator_hides_the_callers() -> None:
    text = "@register('x')\ndef _impl(a):\n    return a\n\n\ndef run(a):\n    return _impl(a)\n"
    assert callsites.read(text) == {}
    assert callsites.read(text.replace("@register('x')", "@functools.cache")) == {"_impl": (("run", 7),)}


def test_a_private_function_another_module_calls_keeps_its_decisions(tmp_path: Path) -> None:
    # `from . import decode` then `decode._run(x, out)`: a caller the module's own text does not show
    # (a module the scan reads: one that asks the GPU itself)
    other = (
        "import torch\n\nfrom . import decode\n\n\ndef serve(x, out):\n"
        "    if torch.cuda.get_device_capability()[0] < 8:\n        return None\n"
        "    return decode._run(x, out)\n"
    )
    found = _scan(tmp_path, {"eng/decode.py": _DECODE.format(more=""), "eng/serve.py": other})
    assert 7 in {f.line for f in found if f.path == "eng/decode.py"}


def test_private_calls_on_other_objects_are_read() -> None:
    text = "x = kda_cute._run_prefill(q)\ny = self._step(1)\nz = cls._make()\nw = a.b._c(1)\n"
    assert callsites.private_calls(text) == ("_c", "_run_prefill")


def test_a_registering_decorator_over_lines_hides_the_callers() -> None:
    text = '@register(\n    "x",\n)\ndef _impl(a):\n    return a\n\n\ndef run(a):\n    return _impl(a)\n'
    assert callsites.read(text) == {}
