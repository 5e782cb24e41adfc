"""A private module that only modules refusing the target import: what it decides is never
reached there.

cuDNN frontend's HSTU attention keeps its launchers and their measured tuning (`_select_q1_fwd_config`,
configs for 10.0/10.3/10.7) in `_interface.py`, which only `api.py` imports; `api.py` raises "HSTU
SM100 requires an SM10x GPU" for any other major and lets the target through nowhere. A decision
or table in `_interface.py` that leaves 12.0 out withholds nothing 12.0 could reach: the API it
serves refuses 12.0 first (issue 14, point 2).

An importer refuses the target when one of its decisions raises for it (every arm the target
reaches is an error) where another arch passes, for a reason (the error names archs that share
what the target lacks, or the importer states such a need: a bare refusal of a portable path is
the gap itself), and none of its decisions gives the target a yes of its own (an arm the target
reaches that some other arch does not, other than an error or a rejection): a module that also
admits the target somewhere may reach the import on that path. Only for a private module (its
name, or a package above it, starts with an underscore): a public one may be imported from outside
the scan, or by a path of its importer that passes no refusal (FlashInfer's `trtllm_ar.py` raises
for one all-reduce and serves the target's others).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from capgap.judging import evidence, namedarchs
from capgap.judging.reach import reached

if TYPE_CHECKING:
    from capgap.arch import ArchFacts
    from capgap.judging.records import FileFacts
    from capgap.judging.registry import Registry

_REFUSED = {"error", "reject"}


def _private(module: str) -> bool:
    """`cudnn.hstu.hstu_attention._interface`: a module its package keeps to itself (its name, or a
    package above it, starts with one underscore), used only by the modules that serve it."""
    return any(p.startswith("_") and not p.startswith("__") for p in module.split(".")[1:])


class RefusingImporters:
    """Per module, the modules of the scan that import it; per (importer, arch), how it refuses."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._importers: dict[str, list[FileFacts]] = defaultdict(list)
        for f in reg.files:
            if f.path.endswith("__init__.py"):
                continue  # a package's re-exports run nothing of what they name
            for module in dict.fromkeys([*f.siblings, *f.imports.values()]):
                if module != f.module:
                    self._importers[module].append(f)
        self._refusals: dict[tuple[str, str], str] = {}

    def refusal(self, f: FileFacts, target: ArchFacts) -> str:
        """How every module importing `f` refuses the target ("" when one does not, or none
        imports it: a module nothing in the scan imports may be called from outside it)."""
        if not _private(f.module):
            return ""  # a public module may be imported from outside the scan, or past the refusal
        importers = self._importers.get(f.module, [])
        if not importers:
            return ""
        said = [self._refuses(i, target) for i in importers]
        if not all(said):
            return ""
        names = ", ".join(i.path.rsplit("/", 1)[-1] for i in importers[:3])
        return f"every module that imports it ({names}) refuses {target.cc} first ({said[0]})"

    def _refuses(self, importer: FileFacts, target: ArchFacts) -> str:
        key = (importer.module, target.cc)
        if key not in self._refusals:
            self._refusals[key] = self._read(importer, target)
        return self._refusals[key]

    def _read(self, importer: FileFacts, target: ArchFacts) -> str:
        refused = ""
        for d in importer.decisions:
            r = reached(d, self._reg.context(d.scope, importer))
            mine = r.reach.get(target.cc, ()) if r is not None else ()
            if r is None or not mine:
                continue
            theirs = {i for cc, arms in r.reach.items() if cc != target.cc for i in arms}
            actions = {d.arms[i].action for i in mine}
            if any(i not in theirs and d.arms[i].action not in _REFUSED for i in mine):
                return ""  # a yes of the target's own: the import may be reached on it
            if actions == {"error"} and any(d.arms[i].action not in _REFUSED for i in theirs):
                # for a reason: the error names archs that share what the target lacks ("HSTU SM100
                # requires an SM10x GPU"), or the module states such a need; a bare refusal of a
                # portable path is the gap itself, judged where it is
                words = " ".join(d.arms[i].summary for i in mine)
                need, _ = namedarchs.need_of(words, target)
                need = need or next(iter(evidence.lacking(importer.needs, target)), None)
                if need is not None and not refused:
                    lacked = evidence.describe(need)
                    refused = f"{importer.path}:{d.line}, which raises on {target.cc}: it needs {lacked}"
        return refused
