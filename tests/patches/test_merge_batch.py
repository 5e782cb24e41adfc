"""The batch of merges (merge_batch.py) gives exactly what one `git merge-file` per file gives:
the same clean text byte for byte, and a conflict exactly where merge-file reports one (those
are then merged by merge-file itself). Checked with the git installed here, on hand-made edge
cases and on a few hundred generated ones."""

from __future__ import annotations

import random

import pytest

from capgap.errors import EnvironmentProblem
from capgap.patches import merge, merge_batch
from capgap.patches.merge import Merge, merge_many

LABELS = ("f (current)", "pristine", "patch p")
BASE = [f"line {n} = {n}\n" for n in range(30)]


def _edit(lines: list[str], **changes: str) -> list[str]:
    out = list(lines)
    for key, text in changes.items():
        out[int(key[1:])] = text
    return out


def _text(lines: list[str], eol: str = "\n", final: bool = True) -> bytes:
    text = "".join(line.replace("\n", eol) for line in lines)
    return (text if final else text[: -len(eol)]).encode()


def edge_cases() -> dict[str, tuple[bytes, bytes, bytes]]:
    """name -> (current, base, theirs)."""
    b = _text(BASE)
    cases = {
        "far apart": (_text(_edit(BASE, l3="upstream\n")), b, _text(_edit(BASE, l25="patched\n"))),
        "next to each other": (_text(_edit(BASE, l10="upstream\n")), b, _text(_edit(BASE, l11="patched\n"))),
        "two lines apart": (_text(_edit(BASE, l10="upstream\n")), b, _text(_edit(BASE, l12="patched\n"))),
        "same line": (_text(_edit(BASE, l7="upstream\n")), b, _text(_edit(BASE, l7="patched\n"))),
        "file start": (_text(_edit(BASE, l20="upstream\n")), b, _text(_edit(BASE, l0="patched\n"))),
        "file end": (_text(_edit(BASE, l0="upstream\n")), b, _text(_edit(BASE, l29="patched\n"))),
        "insert at start and end": (_text(["new first\n", *BASE]), b, _text([*BASE, "new last\n"])),
        "delete at end": (_text(_edit(BASE, l2="upstream\n")), b, _text(BASE[:-3])),
        "identical changes": (_text(_edit(BASE, l5="same\n")), b, _text(_edit(BASE, l5="same\n"))),
        "current unchanged": (b, b, _text(_edit(BASE, l5="patched\n"))),
        "theirs unchanged": (_text(_edit(BASE, l5="upstream\n")), b, b),
        "all three equal": (b, b, b),
        "empty base, both add": (b"upstream\n", b"", b"patched\n"),
        "empty base, theirs adds": (b"", b"", b"patched\n"),
        "theirs empties": (_text(_edit(BASE, l4="upstream\n")), b, b""),
        "current empty": (b"", b, _text(_edit(BASE, l4="patched\n"))),
        "repeated lines": (b"a\nb\nc\n", b"a\nb\na\n", b"a\nb\na\nb\na\n"),
        # merge-ort's histogram diff merges this one clean; merge-file (Myers) reports a conflict
        "histogram differs": (b"e\nd\nd", b"e\nd\nd\n", b"d\ne\nd\nd"),
    }
    for name, final in (("no final newline", False), ("final newline", True)):
        cur = _text(_edit(BASE, l2="upstream\n"), final=final)
        cases[name] = (cur, _text(BASE, final=final), _text([*BASE, "tail\n"], final=False))
    crlf = _text(BASE, "\r\n")
    cases["CRLF"] = (_text(_edit(BASE, l3="up\n"), "\r\n"), crlf, _text(_edit(BASE, l20="pa\n"), "\r\n"))
    cases["CRLF patch on LF"] = (_text(_edit(BASE, l3="up\n")), b, _text(_edit(BASE, l20="pa\r\n")))
    return cases


def generated(count: int, seed: int = 4, lines: int = 12) -> list[tuple[bytes, bytes, bytes]]:
    """Small files over a small alphabet: many repeated lines, so many ways to align them."""
    rng = random.Random(seed)

    def mutate(lines: list[str]) -> list[str]:
        lines = list(lines)
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(lines))
            op = rng.random()
            if op < 0.4 and lines:
                lines[min(at, len(lines) - 1)] = rng.choice("abcde") + "\n"
            elif op < 0.7:
                lines.insert(at, rng.choice("abcde") + rng.choice(["\n", "\r\n"]))
            elif lines:
                del lines[min(at, len(lines) - 1)]
        return lines

    def text(lines: list[str]) -> bytes:
        out = "".join(lines)
        return (out[:-1] if out and rng.random() < 0.2 else out).encode()

    jobs = []
    for _ in range(count):
        base = [rng.choice("abcde") + "\n" for _ in range(rng.randint(0, lines))]
        jobs.append((text(mutate(base)), text(base), text(mutate(base))))
    return jobs


def _one_each(jobs: list[tuple[bytes, bytes, bytes]]) -> list[Merge]:
    return merge._merge_each([(*job, LABELS) for job in jobs])


def test_batch_is_clean_exactly_where_merge_file_is_with_the_same_bytes() -> None:
    cases = edge_cases()
    jobs = list(cases.values()) + generated(300) + generated(60, 7, lines=80)  # long: context cut
    expected = _one_each(jobs)
    got = merge_batch.merge_clean(jobs)  # raises if this git cannot do it: no silent fallback here
    for name, job, want, text in zip([*cases, *range(360)], jobs, expected, got, strict=True):
        assert (text is None) == (want.conflicts > 0), (name, job, want)
        if text is not None:
            assert text == want.text, (name, job)
    by_name = dict(zip(cases, got, strict=False))
    assert by_name["far apart"] is not None and by_name["next to each other"] is None
    assert by_name["histogram differs"] is None and by_name["CRLF"] is not None
    assert sum(text is None for text in got) > 40  # the generated cases hold many conflicts


def test_merge_many_through_the_batch_equals_one_merge_file_each(monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = [(*job, (f"f{i} (current)", "pristine", f"patch p{i}")) for i, job in enumerate(generated(60, 9))]
    calls: list[int] = []
    real = merge_batch.merge_clean
    monkeypatch.setattr(merge_batch, "merge_clean", lambda batch: calls.append(len(batch)) or real(batch))
    monkeypatch.setattr(merge_batch, "worth_batching", lambda batch: list(range(len(batch))))
    assert merge_many(jobs) == merge._merge_each(jobs)  # conflicts too: their markers name the labels
    assert calls == [60]


def test_a_git_that_cannot_batch_falls_back_to_merge_file_once_and_for_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs = [(*job, LABELS) for job in generated(40, 5)]
    tries: list[str] = []

    def old_git(args: list[str], *rest: object, **named: object) -> None:
        tries.append(args[0])
        raise merge_batch.BatchUnavailable("git apply: --cached and --3way cannot be used together")

    monkeypatch.setattr(merge, "_batch_works", True)
    monkeypatch.setattr(merge_batch, "_run", old_git)
    monkeypatch.setattr(merge_batch, "worth_batching", lambda batch: list(range(len(batch))))
    assert merge_many(jobs) == merge._merge_each(jobs)
    assert tries and set(tries) == {"apply"}  # its one git process failed (in each part)
    first = len(tries)
    assert merge_many(jobs[:20]) == merge._merge_each(jobs[:20])
    assert len(tries) == first  # not tried again in this process


def test_only_many_small_text_files_are_batched() -> None:
    small = (b"a\n" * 100, b"b\n" * 100, b"c\n" * 100)
    big = (b"a\n" * 50_000, b"b\n" * 50_000, b"c\n" * 50_000)
    binary = (b"a\0\n", b"b\0\n", b"c\0\n")
    assert merge_batch.worth_batching([small] * 3) == []  # too few to pay for the batch's processes
    assert merge_batch.worth_batching([small] * 40) == list(range(40))
    late_nul = tuple(b"x\n" * 5000 + part for part in (b"a\0\n", b"b\0\n", b"c\0\n"))  # text for git
    assert merge_batch.worth_batching([big, *[small] * 40, binary, late_nul]) == list(range(1, 41))
    assert merge_batch.worth_batching([big] * 40) == []


def test_binary_files_still_go_to_merge_file_which_refuses_them() -> None:
    jobs = [(*job, LABELS) for job in generated(40, 6)]
    jobs.insert(7, (b"x\0 upstream\n", b"x\0\n", b"x\0 patched\n", LABELS))
    with pytest.raises(EnvironmentProblem, match="Cannot merge binary files"):
        merge_many(jobs)
