"""Read and extract files, on every core: the list known up front, or fed as grep names them.

Each file is read and extracted by this process or by one of `jobs - 1` worker processes
(forked, so the parsing modules come loaded); results come back as
`(rel, digest, facts, unreadable-reason)`.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator

from capgap.judging.records import FileFacts
from capgap.reading.cache import digest

POOL_MIN_BYTES = 2 << 20  # below this much to read, starting workers costs more than it saves
CHUNKS_PER_WORKER = 8  # small enough that no worker is left alone with a big last chunk
STREAM_CHUNK_BYTES = 96 * 1024  # fed as grep finds files: the size of each worker's bite
QUEUED_PER_WORKER = 4  # bites submitted and not done: one running, three waiting

Item = tuple[str, str]  # (relative path, path)
Result = tuple[str, str, FileFacts | None, str]


def work(item: Item, hashed: bool = True) -> Result:
    """Read and extract one file: (rel, digest, facts, unreadable-reason); no digest unless `hashed`."""
    from capgap.boundedread import read_prefix
    from capgap.reading.fileparse import MAX_BYTES, facts_for_bytes

    rel, full = item
    try:  # a FIFO, a device (a link to /dev/zero) or a huge file is never read whole
        data, size = read_prefix(full, MAX_BYTES)
    except OSError as exc:
        return rel, "", None, f"unreadable: {exc.strerror or exc}"
    try:
        facts = facts_for_bytes(rel, data, rel.endswith(".py"), size)
    except RecursionError:
        facts = FileFacts(rel, "", skipped="too deeply nested to analyse")
    return rel, digest(data) if hashed else "", facts, ""


def work_chunk(items: list[Item], hashed: bool = True) -> list[Result]:
    from capgap.reading.nogc import gc_paused

    with gc_paused():
        return [work(i, hashed) for i in items]


def chunks(todo: list[Item], sizes: dict[str, int], jobs: int) -> list[list[Item]]:
    """Largest files first, in chunks of about equal bytes: the workers finish together."""
    order = sorted(todo, key=lambda item: -sizes.get(item[0], 0))
    target = max(1, sum(sizes.get(rel, 0) for rel, _ in todo) // (jobs * CHUNKS_PER_WORKER))
    return list(_by_bytes(order, sizes, target))


def _by_bytes(items: Iterable[Item], sizes: dict[str, int], target: int) -> Iterator[list[Item]]:
    chunk: list[Item] = []
    filled = 0
    for item in items:
        chunk.append(item)
        filled += sizes.get(item[0], 0)
        if filled >= target:
            yield chunk
            chunk, filled = [], 0
    if chunk:
        yield chunk


def run(
    items: Iterable[Item], sizes: dict[str, int], jobs: int, pooled: bool, hashed: bool, known: bool
) -> Iterator[list[Result]]:
    """Results, a batch at a time. `known`: `items` is a finished list (ordered for balance);
    else a stream, fed to the workers in bites as it comes. `pooled`: use worker processes."""
    if pooled and not known:  # a stream: worker processes once enough bytes have come to pay
        items, pooled = _enough(iter(items), sizes)
    if not pooled:
        for item in items:
            yield [work(item, hashed)]
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    from capgap.reading import fileparse  # noqa: F401 - imported before the fork: workers inherit it

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    if known:
        batches: Iterable[list[Item]] = chunks(list(items), sizes, jobs)
    else:
        batches = _by_bytes(items, sizes, STREAM_CHUNK_BYTES)
    # This process is the last of the `jobs` workers: what it reads itself is neither pickled nor
    # unpickled (a sixth of a cold scan's CPU went to moving facts between processes).
    queue = QUEUED_PER_WORKER * (jobs - 1)
    with ProcessPoolExecutor(jobs - 1, mp_context=multiprocessing.get_context(method)) as pool:
        pending: deque[Future[list[Result]]] = deque()
        for batch in batches:
            while pending and pending[0].done():
                yield pending.popleft().result()
            if len(pending) < queue:
                pending.append(pool.submit(work_chunk, batch, hashed))
            else:  # every worker has its next bite waiting: this one is ours
                yield work_chunk(batch, hashed)
        while pending:
            yield pending.popleft().result()


def _enough(items: Iterator[Item], sizes: dict[str, int]) -> tuple[Iterable[Item], bool]:
    """(the same items, whether POOL_MIN_BYTES of them came before the stream ended)."""
    head = next(_by_bytes(items, sizes, POOL_MIN_BYTES), [])  # takes no item past the bytes it needs
    filled = sum(sizes.get(rel, 0) for rel, _ in head)
    return itertools.chain(head, items), filled >= POOL_MIN_BYTES


def default_jobs(jobs: int) -> int:
    return jobs or (os.cpu_count() or 1)
