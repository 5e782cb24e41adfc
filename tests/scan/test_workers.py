"""Worker processes for a stream of files start only once enough bytes have come to pay for them."""

from __future__ import annotations

from collections.abc import Iterator

from capgap.reading import workers


def _stream(n: int, seen: list[int]) -> Iterator[tuple[str, str]]:
    for i in range(n):
        seen.append(i)
        yield f"f{i}.py", f"/t/f{i}.py"


def test_a_short_stream_stays_in_this_process_and_loses_nothing() -> None:
    seen: list[int] = []
    sizes = {f"f{i}.py": 1000 for i in range(10)}
    items, pooled = workers._enough(_stream(10, seen), sizes)
    assert not pooled
    assert [rel for rel, _ in items] == [f"f{i}.py" for i in range(10)]


def test_a_long_stream_goes_to_workers_as_soon_as_enough_bytes_came() -> None:
    seen: list[int] = []
    per_file = workers.POOL_MIN_BYTES // 4
    sizes = {f"f{i}.py": per_file for i in range(100)}
    items, pooled = workers._enough(_stream(100, seen), sizes)
    assert pooled
    assert seen == [0, 1, 2, 3]  # decided after four files: the rest still streams
    assert [rel for rel, _ in items] == [f"f{i}.py" for i in range(100)]
