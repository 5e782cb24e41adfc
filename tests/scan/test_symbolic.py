"""Predicates evaluated against the arch facts, with Python's own semantics."""

from __future__ import annotations

import ast

import pytest

from capgap.arch import all_facts
from capgap.judging.keys import classify_keys
from capgap.judging.symbolic import Context, Sym, evaluate, tri


def _admits(expr: str, names: dict[str, str] | None = None) -> list[str] | None:
    env = {k: ast.parse(v, mode="eval").body for k, v in (names or {}).items()}
    sym = evaluate(ast.parse(expr, mode="eval").body, Context(env.get, lambda _n: None))
    if sym.kind != "pred":
        return None
    return [cc for cc, a in all_facts().items() if a.major >= 9 and sym.value(a)]


@pytest.mark.parametrize(
    ("expr", "admits"),
    [
        ("torch.cuda.get_device_capability()[0] in (9, 10)", ["9.0", "10.0", "10.3"]),
        ("get_device_capability() == (10, 0)", ["10.0"]),
        ("major >= 10", ["10.0", "10.3", "11.0", "12.0", "12.1"]),
        ("sm_version in [90, 100]", ["9.0", "10.0"]),
        ("capability == '10.3'", ["10.3"]),
        ("capability >= '9.0'", ["9.0"]),  # string order: "12.0" < "9.0", as in the scanned code
        ("is_cuda() and get_device_capability()[0] == 12", ["12.0", "12.1"]),
        ("not get_device_capability() >= (10, 0)", ["9.0"]),
        ("(10, 0) > get_device_capability() >= (8, 0)", ["9.0"]),
    ],
)
def test_predicates_admit_exactly(expr: str, admits: list[str]) -> None:
    assert _admits(expr) == admits


def test_local_assignments_are_followed() -> None:
    names = {"major": "get_device_capability()[0]", "sm": "major * 10 + minor", "minor": "0"}
    assert _admits("sm == 120", names) == ["12.0", "12.1"]


@pytest.mark.parametrize(
    "expr",
    ["world_size in (2, 4)", "torch.version.cuda >= '12.8'"],
)
def test_non_capability_tests_are_not_predicates(expr: str) -> None:
    assert _admits(expr) is None


def _answers(expr: str) -> dict[str, bool | None]:
    sym = evaluate(ast.parse(expr, mode="eval").body, Context(lambda _n: None, lambda _n: None))
    assert sym.kind == "pred"
    return {cc: sym.value(a) for cc, a in all_facts().items() if cc in {"8.0", "9.0", "12.0"}}


@pytest.mark.parametrize(
    ("expr", "answers"),
    [
        # a flag is no function of the arch: True where the arch part decides, None (depends) elsewhere
        ("flag or get_device_capability()[0] == 9", {"8.0": None, "9.0": True, "12.0": None}),
        ("flag and get_device_capability()[0] >= 9", {"8.0": False, "9.0": None, "12.0": None}),
        ("not (flag and get_device_capability()[0] >= 9)", {"8.0": True, "9.0": None, "12.0": None}),
        (
            "torch.version.hip is None and get_device_capability() == (9, 0)",
            {"8.0": False, "9.0": True, "12.0": False},
        ),
        ("has_device_capability(90)", {"8.0": False, "9.0": True, "12.0": True}),
        ("is_device_capability(90)", {"8.0": False, "9.0": True, "12.0": False}),
        ("is_device_capability_family(120)", {"8.0": False, "9.0": False, "12.0": True}),
        (
            "get_device_capability().as_version_str() in ('9.0', '12.0')",
            {"8.0": False, "9.0": True, "12.0": True},
        ),
        ("get_device_capability().to_int() >= 100", {"8.0": False, "9.0": False, "12.0": True}),
        ("not (120 <= get_device_capability().to_int() < 130)", {"8.0": True, "9.0": True, "12.0": False}),
    ],
)
def test_three_valued_answers(expr: str, answers: dict[str, bool | None]) -> None:
    assert _answers(expr) == answers


@pytest.mark.parametrize(
    ("keys", "style"),
    [
        ("{9: 1, 10: 2}", "major-int"),
        ("{90: 1, 100: 2}", "number-int"),
        ("{'9.0': 1, '10.3': 2}", "dotted-str"),
        ("{'sm_90': 1, 'default': 2}", "sm-str"),
        ("{(9, 0): 1, (10, 0): 2}", "tuple"),
        ("{2: 1, 4: 2, 8: 3}", None),  # world sizes
        ("{1: 1, 16: 2, 64: 3}", None),  # batch sizes
        ("{'12.4': 1, '12.8': 2}", None),  # CUDA versions
        ("{9: 1, '10.0': 2}", None),  # mixed styles
    ],
)
def test_capability_keys_are_recognised_and_near_misses_are_not(keys: str, style: str | None) -> None:
    node = ast.parse(keys, mode="eval").body
    assert isinstance(node, ast.Dict)
    got = classify_keys(node.keys)
    assert (got[0] if got else None) == style


def test_a_remembered_helper_answer_is_given_again_only_where_its_free_names_read_the_same() -> None:
    """An argument-less helper's answer is kept per scan (Context.memo); a name its body takes
    from the caller's scope makes it answer differently in each caller, as without the memo."""
    from capgap.judging.records import HelperDef, Scope

    body = ast.parse("def fam():\n    return major >= 10").body[0].body  # type: ignore[attr-defined]
    helper = HelperDef("fam", "def", [], body, Scope({}, None))
    callers = {
        "reads the device": {"major": ast.parse("get_device_capability()[0]", mode="eval").body},
        "a constant": {"major": ast.parse("9", mode="eval").body},
    }

    def answers(memo: dict | None) -> list[object]:
        out: list[object] = []
        for names in [*callers.values(), *callers.values()]:
            ctx = Context(names.get, lambda n: helper if n == "fam" else None, memo=memo)
            sym = evaluate(ast.parse("fam()", mode="eval").body, ctx)
            out.append(
                (sym.kind, [sym.value(a) for a in all_facts().values()] if sym.kind == "pred" else None)
            )
        return out

    memo: dict = {}
    assert answers(memo) == answers(None)
    assert answers(memo)[0] != answers(memo)[1]
    assert memo  # the answers were kept


@pytest.mark.parametrize(
    ("expr", "cuda"),
    [
        ("torch.version.cuda >= '12.8'", True),
        ("get_cuda_version() < (12, 9)", True),
        ("CUDA_VER >= 129", True),
        ("f(cuda=1) > 2", True),
        ("x['anything'] > 2", True),  # a string: left to the text
        ("major >= 10", False),
        ("a.b(c, d=1) < 2 ** 3", False),
    ],
)
def test_a_comparison_that_names_no_cuda_is_passed_over_before_it_is_written_out(
    expr: str, cuda: bool
) -> None:
    from capgap.judging.symbolic import _may_name_cuda

    node = ast.parse(expr, mode="eval").body
    assert isinstance(node, ast.Compare)
    assert (_may_name_cuda(node.left) or _may_name_cuda(node.comparators[0])) is cuda


def test_an_object_s_attribute_is_not_the_local_of_its_name() -> None:
    # `lens_2d = None` above `if major == 10 and metadata.lens_2d is not None:`: the attribute is
    # the object's (unknown here), whatever the local of the same name holds
    env = {"lens_2d": ast.parse("None", mode="eval").body}
    test = "get_device_capability()[0] == 10 and metadata.lens_2d is not None"
    sym = evaluate(ast.parse(test, mode="eval").body, Context(env.get, lambda _n: None))
    assert sym.kind == "pred"
    facts = all_facts()
    assert [tri(sym)(facts[cc]) for cc in ("10.0", "12.0")] == [None, False]
    # the local itself is followed as before
    local = evaluate(ast.parse("lens_2d is not None", mode="eval").body, Context(env.get, lambda _n: None))
    assert local == Sym("const", False)
