"""Splitting a step over two cores with fork: same results, same order, and a failing child or a
single allowed core leaves all the work to this process."""

from __future__ import annotations

import os

import pytest

from capgap.reading import forked

pytestmark = pytest.mark.skipif(not forked._can_fork(), reason="no fork on this platform")


def _step(part: list[int]) -> list[tuple[int, int]]:
    return [(item * item, os.getpid()) for item in part]


def test_the_parts_come_back_in_order_and_the_first_was_computed_in_a_child() -> None:
    items = list(range(1000))
    out = forked.in_two(_step, items, lambda _: 1, jobs=2)
    assert [value for value, _ in out] == [i * i for i in items]
    pids = [pid for _, pid in out]
    assert pids[0] != os.getpid() and pids[-1] == os.getpid()
    cut = pids.index(os.getpid())
    assert 400 <= cut <= 600  # split near half the weight
    assert set(pids[:cut]) == {pids[0]} and set(pids[cut:]) == {os.getpid()}


def test_weights_decide_where_the_list_is_cut() -> None:
    items = list(range(100))
    out = forked.in_two(_step, items, lambda i: 1000 if i < 10 else 1, jobs=2)
    pids = [pid for _, pid in out]
    assert pids.index(os.getpid()) <= 10  # the ten heavy items alone are half the work


def test_one_core_small_work_or_a_failing_child_leave_it_all_here() -> None:
    me = os.getpid()
    assert {pid for _, pid in forked.in_two(_step, list(range(1000)), lambda _: 1, jobs=1)} == {me}
    assert {pid for _, pid in forked.in_two(_step, list(range(10)), lambda _: 1, jobs=2)} == {me}

    def fails_in_a_child(part: list[int]) -> list[tuple[int, int]]:
        if os.getpid() != me:
            raise RuntimeError("child failed")
        return _step(part)

    out = forked.in_two(fails_in_a_child, list(range(1000)), lambda _: 1, jobs=2)
    assert out == [(i * i, me) for i in range(1000)]


def test_a_step_started_ahead_answers_from_its_child_and_holds_back_in_two() -> None:
    r, w = os.pipe()

    def step() -> list[tuple[int, int]]:
        os.read(r, 1)  # the child waits until the test lets it finish
        return _step(list(range(5000)))  # a result larger than a pipe's buffer

    started = forked.Ahead(step)
    assert started.running() and forked.ahead_running()
    me = os.getpid()  # while it runs, in_two keeps all the work here
    assert {pid for _, pid in forked.in_two(_step, list(range(1000)), lambda _: 1, jobs=2)} == {me}
    os.write(w, b"x")
    out = started.result()
    assert [v for v, _ in out] == [i * i for i in range(5000)] and {pid for _, pid in out} != {me}
    assert not forked.ahead_running()
    os.close(r)
    os.close(w)


def test_a_step_whose_child_fails_is_done_here() -> None:
    parent = os.getpid()

    def step() -> int:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return 7

    assert forked.Ahead(step).result() == 7
