"""The git index around an upgrade. Putting the pristine files back also un-stages them (`git
pull` refuses staged edits as it refuses unstaged ones); the index entries are recorded first,
so that a rollback puts them back exactly and a successful upgrade stages the re-applied files
again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from capgap.patches.apply import PatchResult
from capgap.patches.detect import git

_LITERAL = "--literal-pathspecs"  # file names, never patterns


def _names(out: bytes) -> set[str]:
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


@dataclass
class Staging:
    root: Path
    entries: dict[str, tuple[str, str] | None] = field(default_factory=dict)  # staged rel -> (mode, oid)
    whole: set[str] = field(default_factory=set)  # of those, the ones staged exactly as they were on disk

    @classmethod
    def record(cls, root: Path, rels: list[str]) -> Staging:
        """The index entries of rels that differ from HEAD (None: a staged removal), and which
        of them match the working tree (call it before the files are put back)."""
        staged = _names(git(root, _LITERAL, "diff", "--cached", "--name-only", "-z", "HEAD", "--", *rels))
        out = cls(root, dict.fromkeys(staged))
        if staged:
            for rec in git(root, _LITERAL, "ls-files", "-s", "-z", "--", *staged).split(b"\0"):
                meta, _, path = rec.partition(b"\t")
                mode, oid, stage = (meta.decode().split() + ["", "", ""])[:3]
                if stage == "0":
                    out.entries[path.decode("utf-8", "surrogateescape")] = (mode, oid)
            out.whole = staged - _names(git(root, _LITERAL, "diff", "--name-only", "-z", "--", *staged))
        return out

    def unstage(self, rels: list[str]) -> None:
        """Reset rels in the index to HEAD."""
        git(self.root, _LITERAL, "reset", "-q", "--", *rels)

    def put_back(self) -> None:
        """After a rollback put the files back: their index entries exactly as before."""
        info = "".join(f"{e[0]} {e[1]}\t{rel}\0" for rel, e in sorted(self.entries.items()) if e)
        if info:
            git(self.root, "update-index", "-z", "--index-info", data=info.encode("utf-8", "surrogateescape"))
        gone = "".join(f"{rel}\0" for rel, e in sorted(self.entries.items()) if e is None)
        if gone:
            git(
                self.root,
                "update-index",
                "--force-remove",
                "-z",
                "--stdin",
                data=gone.encode("utf-8", "surrogateescape"),
            )

    def restage(self, results: list[PatchResult]) -> list[str]:
        """After re-applying: stage again every file that was staged whole and was carried over
        (with the file upstream moved it to); messages for those that cannot be."""
        files = {f.path: f for r in results for f in r.files}
        again: set[str] = set()
        messages = []
        for rel in sorted(self.entries):
            result = files.get(rel)
            if rel not in self.whole:
                oid = (self.entries[rel] or ("", "none"))[1]
                messages.append(
                    f"{rel} was partly staged before the upgrade: only the working-tree version was "
                    f"carried over; the staged version is `git show {oid}`"
                )
            elif result is not None and result.outcome == "conflict":
                messages.append(f"{rel} was staged before the upgrade; it conflicts now, so it is not staged")
            else:
                again.update([rel, *(result.writes if result is not None else ())])
        if again:
            paths = "".join(f"{rel}\0" for rel in sorted(again)).encode("utf-8", "surrogateescape")
            git(self.root, "update-index", "--add", "--remove", "-z", "--stdin", data=paths)
        return messages
