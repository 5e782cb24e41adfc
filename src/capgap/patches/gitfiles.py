"""The few git file formats the merge batch writes and reads itself, in a scratch repository
only: a pack of blobs (with its .idx), the index (dircache v2) and loose objects. Starting
`git fast-import`, `git read-tree` and `git cat-file` cost more than making these files here.

Formats: git's Documentation/gitformat-pack.txt and gitformat-index.txt. Objects are stored,
not deflated (a zlib stream of stored blocks): they live for milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib

_BLOB = 3  # pack object type


def oid(data: bytes) -> str:
    """A blob's object id (SHA-1 of its header and content)."""
    return hashlib.sha1(b"blob %d\0%s" % (len(data), data), usedforsecurity=False).hexdigest()


EMPTY = oid(b"")


def _stored(data: bytes) -> bytes:
    """A zlib stream holding data in stored blocks (no compression; no deflate state to set up)."""
    out = [b"\x78\x01"]
    blocks = [data[i : i + 0xFFFF] for i in range(0, len(data), 0xFFFF)] or [b""]
    for n, block in enumerate(blocks):
        final = n == len(blocks) - 1
        out.append(struct.pack("<BHH", final, len(block), 0xFFFF ^ len(block)))
        out.append(block)
    out.append(struct.pack(">I", zlib.adler32(data)))
    return b"".join(out)


def _pack_header(size: int) -> bytes:
    """An object's type and size, as a pack entry starts: 4 size bits, then 7 per byte."""
    out = bytearray([(_BLOB << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def write_pack(gitdir: str, blobs: dict[str, bytes]) -> None:
    """One pack (and its index, version 2) of the given blobs (object id -> content)."""
    body = [b"PACK", struct.pack(">II", 2, len(blobs))]
    pos = 12
    where: dict[str, tuple[int, int]] = {}  # oid -> (offset, crc32 of the entry)
    for name, data in blobs.items():
        entry = _pack_header(len(data)) + _stored(data)
        where[name] = (pos, zlib.crc32(entry))
        body.append(entry)
        pos += len(entry)
    pack = b"".join(body)
    pack_sum = hashlib.sha1(pack, usedforsecurity=False).digest()
    names = sorted(where)
    raw = [bytes.fromhex(n) for n in names]
    fanout = [0] * 256
    for r in raw:
        fanout[r[0]] += 1
    for i in range(1, 256):
        fanout[i] += fanout[i - 1]
    idx = b"".join(
        [
            b"\xfftOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *raw,
            struct.pack(f">{len(names)}I", *(where[n][1] for n in names)),
            struct.pack(f">{len(names)}I", *(where[n][0] for n in names)),
            pack_sum,
        ]
    )
    idx += hashlib.sha1(idx, usedforsecurity=False).digest()
    base = os.path.join(gitdir, "objects", "pack", f"pack-{pack_sum.hex()}")
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".pack", "wb") as fh:
        fh.write(pack + pack_sum)
    with open(base + ".idx", "wb") as fh:  # git looks for packs through their .idx files
        fh.write(idx)


# An index entry: ctime, mtime (s, ns), dev, ino, mode, uid, gid, size, object id, flags.
_ENTRY = struct.Struct(">10I20sH")


def write_index(path: str, entries: dict[str, str]) -> None:
    """An index (version 2) of regular files: name -> object id; stat data all zero."""
    body = [b"DIRC", struct.pack(">II", 2, len(entries))]
    for name, oid_hex in sorted((n.encode(), o) for n, o in entries.items()):
        entry = _ENTRY.pack(0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0, bytes.fromhex(oid_hex), len(name)) + name
        body.append(entry + b"\0" * (8 - len(entry) % 8))  # 1 to 8 NULs: a multiple of 8
    data = b"".join(body)
    with open(path, "wb") as fh:
        fh.write(data + hashlib.sha1(data, usedforsecurity=False).digest())


def read_index(path: str) -> dict[str, str] | None:
    """name -> object id of every stage-0 entry; None for an index this reader does not know."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:4] != b"DIRC" or struct.unpack(">I", data[4:8])[0] not in (2, 3):
        return None
    (count,), pos, out = struct.unpack(">I", data[8:12]), 12, {}
    for _ in range(count):
        fields = _ENTRY.unpack_from(data, pos)
        flags = fields[11]
        start = pos + _ENTRY.size + (2 if flags & 0x4000 else 0)  # version 3: extended flags
        end = data.index(b"\0", start)
        if not flags & 0x3000:  # stage 0: merged
            out[data[start:end].decode()] = fields[10].hex()
        pos += (end - pos + 8) & ~7
    return out


def read_loose(gitdir: str, oid_hex: str) -> bytes | None:
    """A loose blob's content; None when it is not a loose blob with that id."""
    try:
        with open(os.path.join(gitdir, "objects", oid_hex[:2], oid_hex[2:]), "rb") as fh:
            raw = zlib.decompress(fh.read())
    except (OSError, zlib.error):
        return None
    kind, _, rest = raw.partition(b" ")
    size, _, data = rest.partition(b"\0")
    if kind != b"blob" or not size.isdigit() or int(size) != len(data):
        return None
    if hashlib.sha1(raw, usedforsecurity=False).hexdigest() != oid_hex:
        return None
    return data
