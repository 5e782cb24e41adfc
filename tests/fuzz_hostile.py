"""The hostile-input fuzz run of issue 16, as a script: `python -m tests.fuzz_hostile WORK OUTSIDE SEED`.

It feeds generated hostile inputs (fixed seed) to the scan (each file's bytes through the
worker's parser, and trees of them through the whole scan), to the binaries reader, and to the
patch store (tampered stores and journals against a real git checkout, through the CLI), each
under an alarm. It writes only under WORK (HOME, the cache, TMPDIR and the working directory all
point there); hostile inputs aim at OUTSIDE through links and paths. It prints one JSON line:
inputs per area, failures (input and traceback), seconds and peak memory. tests/test_fuzz.py runs
it under an address-space limit and checks that line and OUTSIDE.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ALARM_S = 20  # one input taking this long is a hang
SCAN_INPUTS = 300
BINARY_INPUTS = 160
STORE_INPUTS = 100

PYTHON_SEEDS = [
    b'import torch\nARCH_TILES = {"9.0": 1, "10.0": 2}\n\n\ndef f():\n'
    b"    return ARCH_TILES[torch.cuda.get_device_capability()[0]]\n",
    b"MiB = 1024 * 1024\nTORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {\n    9: {2: 64 * MiB, 4: 32 * MiB},\n"
    b"    10: {2: 64 * MiB},\n}\n",
    b"def supported():\n    major, minor = torch.cuda.get_device_capability()\n"
    b"    if major == 9:\n        return 'wgmma'\n    elif major >= 10:\n        return 'tcgen05'\n"
    b"    raise RuntimeError('sm_90 or sm_100 only')\n",
    b'cuda_archs = ["8.0", "9.0a", "10.0a"]\nnvcc_flags = ["-gencode=arch=compute_90a,code=sm_90a"]\n',
    b"class Backend:\n    @property\n    def is_hopper(self):\n        return self.capability == (9, 0)\n",
]
BUILD_SEED = (
    b'set(CUDA_ARCHS "9.0a;10.0a")\ncuda_archs_loose_intersection(SRCS "9.0a;10.0a" "${CUDA_ARCHS}")\n'
)
CODECS = ["latin-1", "utf-16", "bogus-codec", "base64", "rot13", "idna", "utf-7", "cp1252", "x" * 60, "hex"]


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise Hang(f"no answer within {ALARM_S} s")


class Runner:
    def __init__(self, work: Path, outside: Path, seed: int) -> None:
        self.work, self.outside, self.rng = work, outside, random.Random(seed)
        self.inputs: dict[str, int] = {"scan": 0, "binaries": 0, "store": 0}  # calls made
        self.hostile: dict[str, int] = {"scan": 0, "binaries": 0, "store": 0}  # distinct inputs made
        self.failures: list[dict[str, str]] = []

    def one(self, area: str, what: str, call: Callable[[], None]) -> None:
        self.inputs[area] += 1
        signal.alarm(ALARM_S)
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - every escape is a finding of the fuzz run
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.failures.append({"area": area, "input": what, "traceback": traceback.format_exc()[-3000:]})
        finally:
            signal.alarm(0)

    # --- scan -----------------------------------------------------------------------------

    def hostile_source(self) -> tuple[str, bytes]:
        rng = self.rng
        data = bytearray(rng.choice(PYTHON_SEEDS))
        kind = rng.randrange(14)
        if kind == 0:
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 1:
            data = data[: rng.randrange(len(data))]
        elif kind == 2:
            data[rng.randrange(len(data)) : rng.randrange(len(data))] = b"\0"
        elif kind == 3:
            bom = rng.choice([b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\0\0", b"\0\0\xfe\xff", b"\xef\xbb\xbf"])
            data = bytearray(bom) + data
        elif kind == 4:
            data = bytearray(b"# -*- coding: %s -*-\n" % rng.choice(CODECS).encode()) + data
            if rng.random() < 0.5:
                data += bytes(rng.randrange(128, 256) for _ in range(20))
        elif kind == 5:
            depth = rng.randint(50, 3000)
            opener, closer = rng.choice([(b"(", b")"), (b"[", b"]"), (b"{", b"}"), (b"-", b"")])
            data += b"X = " + opener * depth + b"get_device_capability()" + closer * depth + b"\n"
        elif kind == 6:
            n = rng.randint(20, 62)
            expr = rng.choice([b'"x" * (1 << %d)' % n, b"[0] * (1 << %d)" % n, b"2 ** 63 ** %d" % (n % 9)])
            data += b'ARCH_BIG = {"9.0": %s, "10.0": (1 << %d) * "y"}\n' % (expr, n)
        elif kind == 7:
            data += b"Y = '" + b"a" * rng.randint(10_000, 400_000) + b"'  # capability\n"
        elif kind == 8:
            data += b'"""never closed\n' + b"sm_90 " * rng.randint(1, 500)
        elif kind == 9:
            data = bytearray(os.urandom(rng.randint(1, 4096))) + b"get_device_capability sm_90"
        elif kind == 10:
            data = data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\x0c\n", b"\n\t \t"]))
        elif kind == 11:
            data += b"@skipIf(True)\n" * rng.randint(1, 300)
        elif kind == 12:
            data = bytearray(b"\n".join(rng.choice(PYTHON_SEEDS) for _ in range(rng.randint(2, 40))))
            data[rng.randrange(len(data))] = rng.choice(b"(:[{'\"\\")
        else:
            data = bytearray(BUILD_SEED * rng.randint(1, 5))
            data[rng.randrange(len(data))] = rng.randrange(256)
            return "CMakeLists.txt", bytes(data)
        return "m.py", bytes(data)

    def scan(self) -> None:
        from capgap.arch import parse_arch
        from capgap.reading.fileparse import facts_for_bytes
        from capgap.scan.analyzers import ScanOptions
        from capgap.scan.run import run_scan

        options = ScanOptions(archs=(parse_arch("12.0"), parse_arch("9.0")), use_cache=False, jobs=1)
        tree = self.work / "scan-tree"
        batch: list[tuple[str, bytes]] = []
        for i in range(SCAN_INPUTS):
            name, data = self.hostile_source()
            self.hostile["scan"] += 1
            self.one(
                "scan",
                f"{name} #{i}: {data[:60]!r}",
                lambda n=name, d=data: facts_for_bytes(n, d, n.endswith(".py")),
            )
            batch.append((name, data))
            if len(batch) == 60:  # the same files through the whole reader and rules
                self._scan_tree(tree, batch, options, run_scan)
                batch = []
        self._scan_tree(tree, batch, options, run_scan)

    def _scan_tree(
        self, tree: Path, batch: list[tuple[str, bytes]], options: object, run_scan: Callable
    ) -> None:
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir()
        for n, (name, data) in enumerate(batch):
            (tree / f"d{n}").mkdir()
            (tree / f"d{n}" / name).write_bytes(data)
        for name, make in self._specials(tree):
            self.hostile["scan"] += 1
            self.one("scan", f"special file {name}", make)
        self.one("scan", f"a tree of {len(batch)} hostile files", lambda: run_scan([str(tree)], options))

    def _specials(self, tree: Path) -> list[tuple[str, Callable[[], None]]]:
        secret = self.outside / "secret.py"
        return [
            ("zero.py", lambda: (tree / "zero.py").symlink_to("/dev/zero")),
            ("urandom.py", lambda: (tree / "urandom.py").symlink_to("/dev/urandom")),
            ("fifo.py", lambda: os.mkfifo(tree / "fifo.py")),
            ("setup.py fifo", lambda: os.mkfifo(tree / "setup.py")),
            ("loop.py", lambda: (tree / "loop.py").symlink_to("loop.py")),
            ("dangling.py", lambda: (tree / "dangling.py").symlink_to("nowhere.py")),
            ("dir loop", lambda: (tree / "up").symlink_to("..", target_is_directory=True)),
            ("outside.py", lambda: (tree / "outside.py").symlink_to(secret)),
            ("sparse 6 GiB", lambda: _sparse(tree / "sparse.py", 6 << 30)),
        ]

    # --- binaries -------------------------------------------------------------------------

    def binaries(self) -> None:
        from capgap.binaries.audit import audit_files
        from capgap.binaries.reader import UnreadableBinary, read_binary
        from tests.binaries.fatbin_bytes import container, entry

        seeds = [p.read_bytes() for p in sorted((Path(__file__).parent / "binaries" / "data").glob("*.so"))]
        rng = self.rng
        bdir = self.work / "binaries"
        bdir.mkdir()

        def read(path: Path) -> None:
            with contextlib.suppress(UnreadableBinary):
                read_binary(path)

        for i in range(BINARY_INPUTS - 6):
            kind = rng.randrange(4)
            if kind == 0:  # a real ELF with bytes flipped, mostly in its headers
                data = bytearray(rng.choice(seeds))
                for _ in range(rng.randint(1, 12)):
                    at = rng.randrange(64) if rng.random() < 0.3 else rng.randrange(len(data))
                    data[at] = rng.randrange(256)
                if rng.random() < 0.3:  # the section header table, at the end
                    for _ in range(8):
                        data[len(data) - rng.randrange(1, 1024)] = rng.randrange(256)
            elif kind == 1:
                data = bytearray(rng.choice(seeds)[: rng.randrange(4, 4096)])
            elif kind == 2:  # a bare fatbin with hostile fields
                entries = [
                    entry(
                        rng.choice([1, 2, 8, 0, 0xFFFF]),
                        rng.choice([75, 90, 120, 0, 2**32 - 1]),
                        flags=rng.getrandbits(64),
                        payload=os.urandom(rng.randrange(0, 200)),
                        header_size=rng.choice([32, 48, 64, 0x40, 0xFFFF]),
                        compressed_size=rng.getrandbits(32),
                        full_size=rng.getrandbits(64),
                    )
                    for _ in range(rng.randint(1, 5))
                ]
                data = bytearray(container(*entries))
                if rng.random() < 0.5:
                    struct.pack_into("<Q", data, 8, rng.getrandbits(64))  # the container's size
                if rng.random() < 0.3:  # the first entry's header size: too small, or past the end
                    struct.pack_into("<I", data, 20, rng.choice([0, 8, 16, 2**32 - 1]))
            else:
                data = bytearray(b"\x7fELF" + os.urandom(rng.randrange(0, 2048)))
            path = bdir / f"lib{i}.so"
            path.write_bytes(bytes(data))
            self.hostile["binaries"] += 1
            self.one("binaries", f"lib{i}.so kind {kind} ({len(data)} bytes)", lambda p=path: read(p))
        specials = bdir / "specials"
        specials.mkdir()
        (specials / "zero.so").symlink_to("/dev/zero")
        (specials / "urandom.cubin").symlink_to("/dev/urandom")
        os.mkfifo(specials / "fifo.so")
        (specials / "loop.so").symlink_to("loop.so")
        (specials / "dir.so").mkdir()
        _sparse(specials / "sparse.fatbin", 6 << 30, b"\x50\xed\x55\xba")
        files = sorted(specials.iterdir())
        for path in files:
            self.hostile["binaries"] += 1
            self.one("binaries", f"special {path.name}", lambda p=path: audit_files([p], specials, [(12, 0)]))

    # --- the store ------------------------------------------------------------------------

    def store(self) -> None:
        from tests.cli_runner import run_cli

        checkout = self.work / "checkout"
        _git(self.work, "init", "-q", str(checkout))
        (checkout / "pkg").mkdir()
        (checkout / "pkg" / "tables.py").write_text(PYTHON_SEEDS[1].decode())
        (checkout / "README").write_text("engine\n")
        _git(checkout, "add", "-A")
        _git(checkout, "-c", "user.name=f", "-c", "user.email=f@f", "commit", "-q", "-m", "v1")
        base = self.work / "base-store"
        (checkout / "pkg" / "tables.py").write_text(PYTHON_SEEDS[1].decode() + "X = {12: 1}\n")
        assert run_cli("patch", "save", "p", str(checkout), "--store", str(base)).code == 0
        _git(checkout, "checkout", "-q", "--", ".")
        git_state = _sums(checkout / ".git", skip=("capgap", "index", "logs"))
        for i in range(STORE_INPUTS):
            store = self.work / "store"
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(base, store, symlinks=True)
            what = self._tamper(store, checkout)
            self.hostile["store"] += 1
            for args in (
                ["patch", "list"],
                ["patch", "show", "p"],
                ["patch", "apply", str(checkout)],
                ["patch", "apply", "--reverse", str(checkout)],
            ):
                self.one(
                    "store", f"#{i} {what}: {' '.join(args[:2])}", lambda a=args, s=store: _cli(run_cli, a, s)
                )
            _git(checkout, "checkout", "-q", "--", ".")
            _git(checkout, "clean", "-qfdx")
            shutil.rmtree(checkout / ".git" / "capgap", ignore_errors=True)  # a tampered lock, a journal
            self.one("store", f"#{i} {what}: no write into .git", lambda: _same(git_state, checkout))

    def _tamper(self, store: Path, checkout: Path) -> str:
        rng = self.rng
        pdir = store / "p"
        meta = json.loads((pdir / "meta.json").read_text())
        secret = str(self.outside / "secret.py")
        paths = [
            "../outside.py",
            "/etc/passwd",
            ".git/config",
            ".GIT/hooks/pre-commit",
            "pkg/.git/x",
            "a\0b",
            "x" * 300,
            "pkg/../../x.py",
            "pkg//x",
            "C:/x",
            "pkg\\x",
            "",
            "git~1/config",
            str(self.outside / "abs.py"),
        ]
        kind = rng.randrange(12)
        if kind == 0:
            meta["files"][0]["path"] = rng.choice(paths)
            what = f"path {meta['files'][0]['path'][:40]!r}"
        elif kind == 1:
            key = rng.choice(["files", "target", "for", "created", "format", "note"])
            meta[key] = rng.choice([7, None, [], {}, "x", [1, [2]], {"a": [None]}, True, "sglang>=", 1e308])
            what = f"meta {key} = {meta[key]!r}"
        elif kind == 2:
            entry = meta["files"][0]
            entry[rng.choice(["pristine_sha256", "patched_sha256"])] = rng.choice(
                ["0" * 64, "zz", 5, None, "A" * 64]
            )
            what = f"hashes {entry}"
        elif kind == 3:
            blob = rng.choice(sorted((pdir / "blobs").iterdir()))
            choice = rng.randrange(4)
            blob.unlink()
            if choice == 0:
                blob.symlink_to(secret)
            elif choice == 1:
                os.mkfifo(blob)
            elif choice == 2:
                blob.write_bytes(b"tampered\n")
            else:
                blob.symlink_to("/dev/zero")
            what = f"blob {choice}"
        elif kind == 4:
            (pdir / "meta.json").write_bytes(
                rng.choice([os.urandom(300), b"[" * 100_000, b"{" * 5000, b"\xff\xfe{}", b""])
            )
            return "meta.json bytes"
        elif kind == 5:
            (pdir / "semantic.json").write_bytes(
                rng.choice([b"not json", b"[1, 2]", b'{"a": 1}', b"[" * 50_000])
            )
            what = "semantic.json"
        elif kind == 6:
            (pdir / "patch.diff").write_bytes(os.urandom(200))
            what = "patch.diff"
        elif kind == 7:
            lock = store / ".lock"
            lock.unlink(missing_ok=True)
            rng.choice([lock.mkdir, lambda: lock.symlink_to(secret), lambda: os.mkfifo(lock)])()
            what = "store lock"
        elif kind == 8:  # a forged journal where the next run looks (with the target)
            run = checkout / ".git" / "capgap" / "run"
            run.mkdir(parents=True, exist_ok=True)
            rec = {
                "op": "write",
                "path": rng.choice(["pkg/tables.py", "README", *paths]),
                "before": rng.choice([None, "0" * 64, _sha(self.outside / "secret.py")]),
                "after": rng.choice([None, _sha(checkout / "README"), _sha(checkout / "pkg" / "tables.py")]),
                "backup": rng.choice([secret, "/etc/passwd", str(run / "blobs" / "x"), None, 5]),
            }
            begin = {"op": "begin", "kind": rng.choice(["apply", "upgrade", "fix"]), "root": str(checkout)}
            lines = [begin, rec] + ([{"op": "phase", "phase": "cmd"}] if rng.random() < 0.3 else [])
            (run / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
            what = f"journal {rec}"
        elif kind == 9:  # the same, left in the store by an older capgap
            import hashlib

            key = hashlib.sha256(os.path.realpath(checkout).encode()).hexdigest()[:16]
            run = store / ".runs" / key
            run.mkdir(parents=True)
            (run / "journal.jsonl").write_bytes(
                rng.choice([os.urandom(100), b'{"op": "begin"}\n[1]\n', b"[" * 9000])
            )
            what = "legacy journal"
        elif kind == 10:
            (store / f".trash-p-{rng.randrange(10**6)}").mkdir()
            (store / ".tmp-x-1").symlink_to(self.outside)
            what = "leftovers"
        else:
            target_lock = checkout / ".git" / "capgap" / "lock"
            target_lock.parent.mkdir(parents=True, exist_ok=True)
            rng.choice([target_lock.mkdir, lambda: target_lock.symlink_to(secret)])()
            what = "target lock"
        (pdir / "meta.json").write_text(json.dumps(meta))
        return what


def _cli(run_cli: Callable, args: list[str], store: Path) -> None:
    res = run_cli(*args, "--store", str(store))
    if res.code not in (0, 1, 2) or "Traceback" in res.err:
        raise AssertionError(f"exit {res.code}: {res.err[-500:]}")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _sha(path: Path) -> str | None:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _sums(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for name in filenames:
            if name not in skip:
                path = Path(dirpath, name)
                out[str(path.relative_to(root))] = _sha(path)
    return out


def _same(before: dict[str, str | None], checkout: Path) -> None:
    now = _sums(checkout / ".git", skip=("capgap", "index", "logs"))
    if now != before:
        changed = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
        raise AssertionError(f"written into .git: {changed[:5]}")


def _sparse(path: Path, size: int, head: bytes = b"# capability\n") -> None:
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)


def main(work: Path, outside: Path, seed: int) -> dict[str, object]:
    signal.signal(signal.SIGALRM, _alarm)
    runner = Runner(work, outside, seed)
    start = time.monotonic()
    runner.scan()
    runner.binaries()
    runner.store()
    return {
        "inputs": runner.hostile,
        "calls": runner.inputs,
        "failures": runner.failures,
        "seconds": round(time.monotonic() - start, 2),
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


if __name__ == "__main__":
    work_dir, outside_dir, seed_arg = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    os.chdir(work_dir)
    print(json.dumps(main(work_dir, outside_dir, seed_arg)))
