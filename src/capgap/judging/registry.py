"""Cross-file lookups for judging: helpers by name, table reads by table name, and the string
tables that map a platform object's attributes to the probe functions that answer them."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from capgap.judging.backends import Backends
from capgap.judging.callees import Callees
from capgap.judging.demands import Demands
from capgap.judging.extensions import Extensions
from capgap.judging.named import Named
from capgap.judging.opkernels import OpKernels
from capgap.judging.records import FileFacts, HelperDef, Scope, TableUse
from capgap.judging.refusedfirst import Getters
from capgap.judging.refusingimporters import RefusingImporters
from capgap.judging.symbolic import Context
from capgap.judging.validations import Validations

# A kernel source named for its arch (`sm100_mega_mhc.cuh`): the arch, then the kernel's name
_KERNEL_FILE = re.compile(r"sm(\d+x?)_(\w+)\.cuh?$")
_KERNEL_STEM = 6  # shorter names (`gemm`, `utils`) are parts of many, not one kernel


class Registry:
    def __init__(
        self,
        files: list[FileFacts],
        native: list[str] | None = None,
        extensions: Extensions | None = None,
        op_kernels: OpKernels | None = None,
        outside: Callable[[str], FileFacts | None] | None = None,
    ) -> None:
        self.files = files  # every file of the scan (the decision rules may see only a part)
        self.native = native or []  # the relative paths of the tree's `.cu` / `.cuh` sources
        self.extensions = extensions or Extensions()  # its compiled modules (`_deepselect_C.abi3.so`)
        self.op_kernels = op_kernels or OpKernels()  # its libraries' torch ops and their kernels
        self.outside = outside  # the modules of the releases it pins (scan.dependencies), by name
        self._callees: Callees | None = None
        self._validations: Validations | None = None
        self._backends: Backends | None = None
        self._named: Named | None = None
        self._demands: Demands | None = None
        self._getters: Getters | None = None
        self._importers: RefusingImporters | None = None
        self._called_from_outside: dict[str, set[str]] | None = None
        # (library, arch) -> does the tree hold code of the library for that arch (`ports`)
        self.ported: dict[tuple[str, str], bool] = {}
        self._kernels: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        self.helpers: dict[str, list[tuple[str, HelperDef]]] = defaultdict(list)
        self.uses: dict[str, list[tuple[FileFacts, TableUse]]] = defaultdict(list)
        self.aliases: dict[str, str] = {}
        self.modules: dict[str, Scope] = {}
        # what argument-less helpers gave (records.HelperDef.evaluate); one name resolver per file
        self._memo: dict[Any, list[Any]] = {}
        self._resolvers: dict[int, tuple[FileFacts, Callable[[str], HelperDef | None]]] = {}
        for f in files:
            self.modules[f.module] = f.module_scope
            for h in f.helpers:
                self.helpers[h.name].append((f.module, h))
            for u in f.uses:
                self.uses[u.name].append((f, u))
            self.aliases.update(f.aliases)

    def ports(self, lib: str, cc: str, major: int, minor: int) -> bool:
        """Does the tree hold code of the library (underscores dropped: `deepgemm`) for the arch's
        family (`deep_gemm_sm120.py`, `deep_gemm/impls/sm120_fp8_gemm.cuh`)? Then the library runs
        there (a fork, or a newer release than the upstream fact): its name says nothing against it."""
        key = (lib, cc)
        if key not in self.ported:
            self.ported[key] = bool(self.port_of(lib, major, minor))
        return self.ported[key]

    def called_from_outside(self, module: str) -> set[str]:
        """The private names of a module that modules of the scan import from it (`from .mod import
        _helper`), with every private name any module calls on an object (`mod._helper(...)`, its
        object unknown): the callers of those that `module`'s own text does not show."""
        if self._called_from_outside is None:
            anywhere: set[str] = set()
            by_module: dict[str, set[str]] = defaultdict(set)
            for f in self.files:
                anywhere.update(f.private_calls)
                for name, source in f.imports.items():
                    if name.startswith("_"):
                        by_module[source].add(name)
            self._called_from_outside = {"": anywhere, **by_module}
        return self._called_from_outside[""] | self._called_from_outside.get(module, set())

    def port_of(self, lib: str, major: int, minor: int) -> str:
        """The first path of the tree holding code of `lib` (lowercase, underscores dropped) for
        the arch's family (`flash_attention_v4_sm120.py` for `flashattention` on 12.0); ""."""
        family = re.compile(rf"sm{major}(?:{minor}|x)")
        for path in [f.path for f in self.files] + self.native:
            low = path.lower().replace("_", "")
            if lib in low and family.search(low):
                return path
        return ""

    def kernels(self, lib: str, cc: str, major: int, minor: int) -> tuple[frozenset[str], frozenset[str]]:
        """The library's kernels in its native sources (file names past `smNNN_`, underscores
        dropped: `megamhc`): those it has for the arch's family (`sm120_fp8_gemm.cuh`), then those
        it has for other archs only (`sm100_mega_mhc.cuh`, no `sm120_*mega_mhc*`): a path that
        names one of the latter runs a kernel the port left out."""
        key = (lib, cc)
        if key not in self._kernels:
            own: set[str] = set()
            other: set[str] = set()
            for path in self.native:
                if lib not in path.lower().replace("_", "").rsplit("/", 1)[0]:
                    continue
                m = _KERNEL_FILE.match(path.rsplit("/", 1)[-1].lower())
                if m is not None and len(stem := m[2].replace("_", "")) >= _KERNEL_STEM:
                    (own if m[1] in (f"{major}{minor}", f"{major}x") else other).add(stem)
            self._kernels[key] = (frozenset(own), frozenset(k for k in other if not any(k in o for o in own)))
        return self._kernels[key]

    @property
    def callees(self) -> Callees:
        """The scanned modules by name, for what a path's callees need (built on first use)."""
        if self._callees is None:
            self._callees = Callees(self.files, extensions=self.extensions, outside=self.outside)
        return self._callees

    @property
    def validations(self) -> Validations:
        """The decisions that check a setting's string, by string (built on first use)."""
        if self._validations is None:
            self._validations = Validations(self)
        return self._validations

    @property
    def backends(self) -> Backends:
        """The backend classes' own capability checks, for the enum members a path picks."""
        if self._backends is None:
            self._backends = Backends(self)
        return self._backends

    @property
    def demands(self) -> Demands:
        """The asserts that demand a setting be one of some strings, by setting (built on first use)."""
        if self._demands is None:
            self._demands = Demands(self)
        return self._demands

    @property
    def getters(self) -> Getters:
        """The packages' capability getters that raise for some archs (built on first use)."""
        if self._getters is None:
            self._getters = Getters(self)
        return self._getters

    @property
    def importers(self) -> RefusingImporters:
        """The modules of the scan that import each module, and which of them refuse an arch."""
        if self._importers is None:
            self._importers = RefusingImporters(self)
        return self._importers

    @property
    def named(self) -> Named:
        """The backends registered by name (`@register_attention_backend("x")`), for the strings a
        path gives a setting."""
        if self._named is None:
            self._named = Named(self)
        return self._named

    def context(self, scope: Scope, f: FileFacts, given: frozenset[str] = frozenset()) -> Context:
        """Where the names of an expression at `scope` in file `f` come from: the scope, then a
        constant the file imported (`from .caps import SUPPORTED_CUDA_ARCHS`)."""

        def lookup(name: str) -> object:
            found = scope.lookup(name)
            if found is None and name in f.imports:
                source = self.modules.get(f.imports[name])
                found = source.names.get(name) if source is not None else None
            return found

        kept = self._resolvers.get(id(f))
        if kept is None or kept[0] is not f:
            kept = self._resolvers[id(f)] = (f, self.helper_for(f.module, f.imports))
        return Context(lookup, kept[1], alias=self._alias, given=given, memo=self._memo)

    def _alias(self, name: str) -> str | None:
        return self.aliases.get(name)

    def helper_for(
        self, module: str, imports: dict[str, str] | None = None
    ) -> Callable[[str], HelperDef | None]:
        """Resolve a called name: what the module imported it from, else its own, else a module-level one."""
        imports = imports or {}

        def find(name: str) -> HelperDef | None:
            short = name.split(".")[-1]
            found = self.helpers.get(short)
            if not found:
                return None
            if "." not in name:  # a bare call never means a method
                found = [(m, h) for m, h in found if not h.method]
                if not found:
                    return None
            else:  # `obj.name()`: a method of that name first
                found = sorted(found, key=lambda mh: not mh[1].method)
                if found[0][1].method:
                    return next((h for m, h in found if m == module and h.method), found[0][1])
            source = imports.get(short)
            if source:
                hit = next((h for m, h in found if m == source), None) or next(
                    (h for m, h in found if m.startswith(source + ".")), None
                )
                if hit is not None:
                    return hit
            return next((h for m, h in found if m == module), found[0][1])

        return find
