"""The values a function of the tree may return on one arch (judging.resolved), read from text."""

from __future__ import annotations

import textwrap

from capgap.arch import all_facts
from capgap.judging.resolved import ANY, Resolver

_MODULE = """
import torch


def _check(n):
    if n == 1:
        return True, None
    if n == 2:
        return torch.cuda.get_device_capability()[0] == 10, f"needs 10.x for {n}"
    return GENERIC, "unnamed"


def accepts(n):
    return _check(n)[0]


def pick():
    n = 2 if torch.cuda.get_device_capability()[0] == 10 else 1
    n = configured() or n
    assert accepts(n)
    return n


def looped():
    n = 1
    while more():
        n = 2
    return n
"""


def _values(function: str, cc: str, generic: str = "False") -> object:
    text = textwrap.dedent(_MODULE.replace("GENERIC", generic))
    resolver = Resolver(lambda module: ("eng/mod.py", text) if module == "eng.mod" else None)
    module = resolver.module("eng.mod")
    assert module is not None
    return resolver.values(module, module.functions[function], (), all_facts()[cc])


def test_an_assert_keeps_the_values_the_predicate_may_accept_on_the_arch() -> None:
    # (a wrapper handing its argument on: the values the inner check names, the first of a tuple)
    assert _values("pick", "12.0") == frozenset({1})
    assert _values("pick", "10.0") == frozenset({1, 2})


def test_a_predicate_that_may_accept_what_it_does_not_name_narrows_nothing() -> None:
    assert _values("pick", "12.0", generic="True") is ANY


def test_what_a_loop_assigns_is_unknown_after_it() -> None:
    assert _values("looped", "12.0") is ANY


def test_a_block_is_read_alone_with_the_modules_line_numbers() -> None:
    from capgap.judging.resolved import Module

    text = textwrap.dedent(
        """
        import torch


        class Runner:
            LIMIT = 4

            def pick(self):
                def inner():
                    return 1
                if self.version == 4:
                    return inner()
                return 0
        """
    )
    module = Module("eng.run", "eng/run.py", text)
    block = module.block_at(12)  # `if self.version == 4:` in `pick`
    assert block is not None
    (func,) = block.body
    assert (func.name, func.lineno) == ("pick", 8)
    outer = module.block_at(12, outer=True)
    assert outer is not None and [n.name for n in outer.body] == ["Runner"]
    assert module.block_at(6) is None  # a statement of the class body sits in no function
    assert module.block_at(2) is None  # module level
