"""gate-admits-unsupported: a decision lets the target into a path whose code needs a feature the
target lacks, which a sibling admitted with it has, while other archs get another outcome.

Emitted only with direct evidence in the guarded code (tcgen05, TMEM, UMMA, wgmma, warpgroup,
multimem / multicast, an `sm_100a`-only target): a library's name is not enough (DeepGEMM and
FlashMLA have paths for several archs), unless the decision probes for the upstream package itself
(`try: import deep_gemm` ... `return major >= 9`) behind a test written for a generation and newer
(it would admit an arch newer than any known), and the tree holds no code of that library for the
target (`deep_gemm_sm120.py`); and not when the module checks that feature at run time
(`if handle.multicast_ptr == 0:`): the path turns itself off there. High when the arm selects that
path by name (`backend = "fa3"`): the engine's own choice fails on first use; medium otherwise.
Also high: the arm's function is used with a fixed Triton launch config written as literals
(judging.tileconfigs) whose estimated shared memory (configs.smem) exceeds the target's per-block
limit while a sibling admitted with it fits: the launch raises OutOfResources on the target.
Native gates are judged by `capgap.native.admits` (preprocessor) and `capgap.native.hostadmits`
(C++ host dispatch) on the same terms.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from capgap.arch import ArchFacts, ArchSpec, all_facts
from capgap.findings import Finding
from capgap.judging import (
    decider,
    evidence,
    kernelmodules,
    namedarchs,
    prose,
    refusedfirst,
    sizesaid,
    tileconfigs,
    torchimpls,
)
from capgap.judging.basis import decision_text
from capgap.judging.reach import Reached, open_ended
from capgap.judging.records import Arm, Decision, FileFacts
from capgap.judging.registry import Registry
from capgap.judging.statements import short

RULE_ID = "gate-admits-unsupported"
# Instruction sets and hardware named as such: what a comment may say code uses
_INSTRUCTIONS = ("tcgen05", "tmem", "umma", "wgmma", "warpgroup", "multimem", "multicast", "nvls")
_DIRECT = (
    *_INSTRUCTIONS,
    "sm_90a",
    "sm90a",
    "sm_100a",
    "sm100a",
    "fa3",  # FlashAttention-3: the Hopper wgmma kernels, built for nothing else
    "flash_attn_3",
    "flashattn3",
    "mnnvl",
    "nvswitch",
)


def _decided_below(r: Reached, arm: int, cc: str) -> bool:
    """Is `arm` the rest of a function past its guard clauses, in which a later decision of the
    function that tests the arch is reached by `cc`? That decision says which path `cc` gets."""
    return any(p.reach.get(cc) for p in r.peers_below(arm))


def check(
    r: Reached, f: FileFacts, arch: ArchSpec, place: dict[str, str], reg: Registry | None = None
) -> Finding | None:
    d, target = r.decision, arch.facts
    facts = all_facts()
    for i in r.reach[target.cc]:
        arm = d.arms[i]
        if arm.action != "positive":
            continue
        with_it = [cc for cc in r.archs_reaching(i) if cc != target.cc]
        others = [cc for cc in facts if i not in r.reach[cc]]
        if not others:
            continue  # every arch gets here: the decision is not about this path
        if _decided_below(r, i, target.cc):
            continue  # past a guard clause (`if major == 11: raise`), a later test decides the path
        if decider.names_generation(arm.test, target):
            continue  # `assert major == 8 or major == 9`: the authors name the target's generation
        if reg is not None and refusedfirst.refused_before(d, f, reg, target):
            return None  # `dispatch.arch == 90` in a package whose `get_device_arch()` raises for the target
        probed = _probed(d, f, i)
        pairs = [*zip(arm.needs, arm.evidence, strict=False), *_probe_needs(d, f, i, probed), *_handed(arm)]
        pairs += _flag_guarded(arm, f, reg)
        worded = _said_beside(d, i, target)
        pairs += worded
        for need, seen in pairs:
            if any(target.has(feat) for feat in need):
                continue
            # a kernel library the decision itself probes for (`import deep_gemm`) behind a test
            # written for "this generation and newer": the target is sent to its kernels unasked
            library = (
                not _direct(seen)
                and _library(seen) in probed
                and open_ended(r, i)
                and not _ported(_library(seen), arch, reg)
            )
            imported = _imported_kernel(arm, seen)
            if imported:  # "the module flash_attn.cute.flash_fwd_sm100_fp4, which it imports (line 303)"
                seen = f"the module {imported}, which it imports{seen[seen.rfind(' (') :]}"
            named = (
                _direct(seen)
                or need == torchimpls.NEED  # the name torch's registry activates (judging.torchimpls)
                or imported
                or (_SELECTED_FAMILY.search(seen) and _picked(seen, arm.summary))
                or (need, seen) in worded
            )
            if not named and not library:
                continue  # a family named only in passing (a flag of the user's choice) is no path
            if not any(facts[cc].has(feat) for cc in with_it for feat in need):
                continue
            if _checked_at_run_time(d, f, need):
                continue  # the module checks the feature at run time (`if handle.multicast_ptr == 0:`)
            if _picked(seen, arm.summary) and _factory_accepts(arm.values, arch, reg):
                continue  # the code registered under the name checks the arch and lets the target in
            # the arm selects, by name, what the target cannot run (`attention_backend = "fa3"`):
            # the engine's own choice fails when first used, where the other archs get a backend
            picked = _picked(seen, arm.summary) or (
                (need, seen) in worded and bool(_given(arm, _quoted(seen)))
            )
            refused = _factory_refusal(arm.values, arch, reg) if picked else None
            if refused is None and _before_the_feature(with_it, target, need):
                # a target from before the feature, let in with other GPUs from before it (`major
                # >= 8` on an Ada, for wgmma): what they are sent to runs without it, unless the
                # code the arm names refuses the target itself
                continue
            other = next((d.arms[j].summary for j in range(len(d.arms)) if j not in r.reach[target.cc]), "")
            what = evidence.describe(need)
            consequence = (
                f"{arch.cc} is let into code that needs {what} (read from {seen}), "
                f"which {arch.cc} lacks: "
                + (
                    f"the engine {_selection(arm, _quoted(seen))} for {arch.cc}, which fails when first used"
                    if picked
                    else "where it is installed, expect the library's unsupported-arch error when used"
                    if library
                    else "expect its multicast (multimem) setup or operations to fail"
                    if need == ("nvls_multicast",)
                    else "expect 'no kernel image is available' or an illegal instruction"
                )
                + (f", where the other outcome {other}" if other and picked else "")
                + (f" where the other outcome {other}" if other and not picked else "")
            )
            severity = "high" if picked else "medium"
            if refused is not None:
                # what the engine's own code does with the name on the target, not what its name hints
                consequence += f"; {refused}"
            written = _written_for(f, need)
            if written and not picked:
                # `fmha_sm100/cute/x.py`: every path of the module needs it, the target's other
                # outcome too; what keeps the target out is the choice of the module, not this test
                severity = "low"
                consequence += (
                    f"; but the whole module is written for what {arch.cc} lacks ({written}): "
                    f"{arch.cc} runs none of it, whichever outcome it gets here"
                )
            return _admitted(r, f, arch, i, with_it, place, severity, consequence, "the path", what, seen)
        driven = None
        if reg is not None and _a_check(d, i):
            driven = kernelmodules.driven_need(f, reg, target, with_it)
        if driven is not None and not _checked_at_run_time(d, f, driven[0]):
            # `if cc < 100: raise ...` in an API's check_support, the rest letting the target in:
            # what it lets it into is what the kernel modules of the API run (`fmha.py`: tcgen05)
            need, seen = driven
            if not _before_the_feature(with_it, target, need):
                what = evidence.describe(need)
                consequence = (
                    f"{arch.cc} passes the check into code that needs {what} (read from {seen}), which "
                    f"{arch.cc} lacks: expect a compile error, 'no kernel image is available' or an "
                    "illegal instruction where it runs, not the check's own refusal"
                )
                return _admitted(r, f, arch, i, with_it, place, "medium", consequence, "the path", what, seen)
        if f.tile_configs:
            found = _tile_overflow(r, f, arch, i, with_it, place)
            if found is not None:
                return found
        if d.sizes:
            found = _said_overflow(r, f, arch, i, with_it, place)
            if found is not None:
                return found
    return None


def _said_overflow(
    r: Reached, f: FileFacts, arch: ArchSpec, i: int, with_it: list[str], place: dict[str, str]
) -> Finding | None:
    """The arm gives the target a value its decision's own comments say needs more shared memory
    than the target's blocks get ("num_stages=4 needs 108 KB" above `3 if is_sm121() else 4`, read
    on a 99 KB 12.0), while another outcome does not give it and a GPU let in with the target has
    that much: the launch raises OutOfResources there. High: the authors' number, a fixed choice."""
    d, target, facts = r.decision, arch.facts, all_facts()
    limit = target.smem_per_block_kb * 1024
    for said in d.sizes:
        if said.nbytes <= limit or not sizesaid.gives(d.arms[i].summary, said.value):
            continue
        if all(sizesaid.gives(a.summary, said.value) for j, a in enumerate(d.arms) if j != i):
            continue  # every outcome gives it: the decision chooses something else
        fits = [cc for cc in with_it if facts[cc].smem_per_block_kb * 1024 >= said.nbytes]
        if not fits:
            continue
        what = f"{said.nbytes:,} bytes of shared memory per block"
        seen = f"'{short(said.sentence, 120)}', a comment in the decision"
        consequence = (
            f"{arch.cc} is given {said.name}={said.value}, which the decision's own comment says needs "
            f"{said.nbytes:,} bytes of shared memory ({seen}); a block on {arch.cc} gets {limit:,} "
            f"({fits[0]}, let in with it, gets {facts[fits[0]].smem_per_block_kb * 1024:,}): expect "
            "Triton's OutOfResources (out of resource: shared memory) when it launches"
        )
        return _admitted(
            r, f, arch, i, with_it, place, "high", consequence, f"{said.name}={said.value}", what, seen
        )
    return None


_ONLY = re.compile(r"-only\b|\bonly\b|\brequires?\b|\bexclusive", re.I)


def _said_beside(d: Decision, i: int, target: ArchFacts) -> list[tuple[tuple[str, ...], str]]:
    """What the words in the decision's other arms say a name arm `i` gives a setting needs: "MegaMoE
    and the packed NVFP4 KV cache are SM100-only; neither is selected here" in the arm that turns
    the target's siblings away, where the rest sets `moe_a2a_backend="megamoe"`; the archs a clause
    names as the only ones must all have what the target lacks (gate_excludes_arch reads them)."""
    values = {_plain(v): v for v in d.arms[i].values if len(_plain(v)) >= 4}
    out: list[tuple[tuple[str, ...], str]] = []
    for j, other in enumerate(d.arms):
        for note in other.notes if j != i and values else ():
            for clause in prose.clauses(note):
                words = _plain(clause)
                hit = (
                    next((v for k, v in values.items() if k in words), None) if _ONLY.search(clause) else None
                )
                need, archs = namedarchs.need_of(clause, target) if hit else (None, [])
                if need is not None and hit is not None:
                    where = f"a comment at line {other.line}, naming {', '.join(archs)}"
                    out.append((need, f"'{hit}' ('{short(clause, 100)}', {where})"))
    return out


def _no_outcome_runs(r: Reached, i: int, target: ArchFacts) -> str:
    """Where every outcome of the decision the target does not get is a path (no refusal, no
    skipping, no set of choices of which one may suit it: `moe_runner_backend="marlin"` beside
    `attention_backend="fa3"`) whose code needs something it lacks too: what the first of them
    needs, as "X needs Y (read from Z)"; "" otherwise."""
    d = r.decision
    said = ""
    for j in range(len(d.arms)):
        if j == i or j in r.reach[target.cc]:
            continue
        arm = d.arms[j]
        lacked = next(
            ((n, w) for n, w in zip(arm.needs, arm.evidence, strict=False) if evidence.lacking([n], target)),
            None,
        )
        if arm.action != "positive" or arm.values or lacked is None:
            return ""
        said = (
            said or f"{short(arm.summary, 60)} needs {evidence.describe(lacked[0])} (read from {lacked[1]})"
        )
    return said


def _selection(arm: Arm, value: str) -> str:
    """How the arm selects `value`: the setting it gives it (`sets moe_a2a_backend=megamoe`), or
    what the arm does."""
    given = _given(arm, value)
    return f"sets {given}" if given else arm.summary


def _plain(text: str) -> str:
    """Letters and digits only, lowercased: `MegaMoE` and `megamoe`, `fp8_e4m3` and `FP8 E4M3` alike."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _given(arm: Arm, value: str) -> str:
    """The setting the arm gives `value` by name (`moe_a2a_backend=megamoe`, from
    `overrides.update(moe_a2a_backend="megamoe")`), or ""."""
    return next((setting for setting in arm.settings if setting.endswith("=" + value)), "")


_BARE_FLAG = re.compile(r"^(?:el)?if\s+(?:not\s+)?([A-Za-z_]\w*)\s*:$")
_FEATURE_WORD = re.compile(r"multicast|nvls|mnnvl", re.I)


def _a_check(d: Decision, i: int) -> bool:
    """Is the decision a check whose other outcomes all refuse (`if cc < 100: raise ...`), arm `i`
    being what passes it (the rest of the function: `return True`, a flag set)?"""
    others = [a for j, a in enumerate(d.arms) if j != i]
    refusing = all(a.action in {"error", "reject"} for a in others)
    return d.kind in {"guards", "assert"} and bool(others) and refusing


def _checked_at_run_time(d: Decision, f: FileFacts, need: tuple[str, ...]) -> bool:
    """Does the module check the feature at run time (`if handle.multicast_ptr == 0:`)? Not by a
    flag whose name alone speaks of the feature (`can_use_custom_nvls_collectives = is_bf16 and
    major >= 9 and has_buffer`, then `if can_use_custom_nvls_collectives:`)."""
    for guard in f.guards:
        if need not in guard.needs:
            continue
        # (a flag of that name elsewhere in the module is read as the decision's scope binds it)
        flag = _BARE_FLAG.match(guard.source)
        bound = d.scope.lookup(flag[1]) if flag is not None else None
        if isinstance(bound, ast.expr) and not _FEATURE_WORD.search(ast.unparse(bound)):
            continue
        return True
    return False


def _before_the_feature(with_it: list[str], target: ArchFacts, need: tuple[str, ...]) -> list[str]:
    """Where the target predates every arch having the need, the archs admitted with it that do
    too (an Ada let into a path said to need wgmma beside an Ampere): the path serves GPUs from
    before the feature. ([] for a target from after it: a library that runs older GPUs on kernels
    of their own may still send the target to the feature's, as FA3 sends 9.0 and newer to wgmma.)"""
    facts = all_facts()
    having = [(a.major, a.minor) for a in facts.values() if any(a.has(feat) for feat in need)]
    if not having or (target.major, target.minor) > min(having):
        return []
    first = min(having)
    return [cc for cc in with_it if (facts[cc].major, facts[cc].minor) < first]


def _factory_refusal(values: tuple[str, ...], arch: ArchSpec, reg: Registry | None) -> str | None:
    """Where the function a picked name is registered to build refuses the target: "the code
    registered as 'fa3' (attention_registry.py:243) fails the assert '...' on 12.0"."""
    if reg is None:
        return None
    for name in values:
        got = reg.named.refusal(name, arch.facts)
        if got is not None:
            f, d, summary = got
            return f"the code registered as '{name}' ({f.path}:{d.line}) {summary} on {arch.cc}"
    return None


def _factory_accepts(values: tuple[str, ...], arch: ArchSpec, reg: Registry | None) -> bool:
    """Does the function a picked name is registered to build check the arch and let the target
    through (sglang's fa3 factory asserts major 8 or 9: its SM80 kernels run on an 8.9)?"""
    return reg is not None and any(reg.named.accepts(name, arch.facts) is not None for name in values)


def _written_for(f: FileFacts, need: tuple[str, ...]) -> str:
    """Where the module's path says it is written for the need (`'sm100' in the module's path`),
    "" when it does not."""
    pairs = zip(f.needs, f.needs_from, strict=True)
    return next((seen for n, seen in pairs if n == need and "module's path" in seen), "")


def _admitted(
    r: Reached,
    f: FileFacts,
    arch: ArchSpec,
    i: int,
    with_it: list[str],
    place: dict[str, str],
    severity: str,
    consequence: str,
    needer: str,
    what: str,
    seen: str,
) -> Finding:
    """The finding that arm `i` lets the target into what `needer` (the path, its tile config)
    needs: `what`, read from `seen`. It sits at the test that lets the arm in (for the rest of a
    block after guard clauses, the first guard that asks about the arch)."""
    d = r.decision
    asked = i if d.arms[i].test is not None else next((j for j in range(i) if r.names(j)), 0)
    names = r.names(asked)
    symbol = names[0] if names else d.source[:60]
    extra: dict[str, Any] = {
        "module": f.module,
        "context": d.context,
        "decision": d.kind,
        "admits": r.archs_reaching(i),
        "needs": [what],
        "evidence": seen,
        "instead": d.arms[i].summary,
        **place,
    }
    if place.get("where", "runtime") != "runtime":
        severity = "low"  # tests, benchmarks, examples, backward passes: not what a server runs
    neither = _no_outcome_runs(r, i, arch.facts)
    if neither and severity != "low":
        # `if sm == 90: return run_sm90(...)` then the SM100 path for everyone else: kept out, the
        # target would get Hopper's kernel instead; it loses nothing, only the error it meets
        severity = "low"
        consequence += (
            f"; but {arch.cc} could run no outcome of this decision ({neither}): only its error differs"
        )
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=d.arms[asked].line if d.arms[asked].test is not None else d.line,
        symbol=symbol,
        present=tuple(with_it),
        missing=arch.cc,
        consequence=consequence,
        message=f"{symbol} admits {arch.cc} with {', '.join(with_it)}, but {needer} needs {what}",
        arch=arch.cc,
        source=d.source,
        extra=extra,
        basis=decision_text(d, i),
    )


def _tile_overflow(
    r: Reached, f: FileFacts, arch: ArchSpec, i: int, with_it: list[str], place: dict[str, str]
) -> Finding | None:
    """The arm lets the target into a path whose function is used with a literal Triton launch
    config (judging.tileconfigs) that needs more shared memory per block than the target has,
    while a sibling admitted with it can give that much: the launch fails on the target with
    `OutOfResources`. High: a fixed config has no autotune fallback. The estimate counts the copies
    of the tiles Triton keeps in a K loop it pipelines, which it does at a real launch, where the
    JIT specializes aligned tensors (lmdeploy's compact MoE kernel at 64/512/64, 3 stages, launched
    with Triton 3.6.0: 221,184 bytes on an H200, 147,456 compiled for sm_120, as estimated; only a
    compile without that specialization keeps one copy, 73,728)."""
    d, target, facts = r.decision, arch.facts, all_facts()
    gate = d.context.rsplit(".", 1)[-1]
    dtype = tileconfigs.dtype_of(f.path)
    limit = target.smem_per_block_kb * 1024
    for cfg in f.tile_configs:
        need = cfg.need(target, dtype)
        if need <= limit or not tileconfigs.linked(f.calls, gate, cfg.function):
            continue
        fits = [cc for cc in with_it if cfg.need(facts[cc], dtype) <= facts[cc].smem_per_block_kb * 1024]
        if not fits:
            continue
        sibling = fits[0]
        seen = f"{cfg.function}() line {cfg.line}: {cfg.describe()}"
        what = f"{need:,} bytes of shared memory per block"
        consequence = (
            f"{arch.cc} is let into a path launched with the fixed Triton config of {seen}, "
            f"estimated to need {what} on {arch.cc} ({cfg.copies(target)} copies of the A and B tiles, "
            f"as Triton pipelines the K loop; limit {limit:,}; "
            f"{cfg.need(facts[sibling], dtype):,} on {sibling}, which fits): the launch raises "
            "OutOfResources (out of resource: shared memory) when that config is picked"
        )
        return _admitted(r, f, arch, i, with_it, place, "high", consequence, "its tile config", what, seen)
    return None


# Kernel families built for one arch family only, direct evidence where an arm selects them by
# name: TRT-LLM-gen cubins and the FlashInfer backends that run them (SM100 family)
_SELECTED_FAMILY = re.compile(r"'(?:\w*trtllm_gen\w*|flashinfer_trtllm)'", re.I)


def _picked(seen: str, summary: str) -> bool:
    """Does the arm select the evidence word by name: its string (`'fa3'`) or an enum member of
    that name (`MoeRunnerBackend.FLASHINFER_TRTLLM`), set or returned?"""
    word = _quoted(seen)
    unwrapped = summary.removeprefix("carries on (")
    selects = unwrapped.startswith(("sets ", "returns "))
    named = f"'{word}'" in unwrapped or re.search(rf"\.{re.escape(word)}\b", unwrapped.lower()) is not None
    return bool(word) and selects and named


def _library(seen: str) -> str:
    """The kernel library (evidence.LIBRARIES, underscores dropped) the evidence word names, or ""."""
    return evidence.library_of(seen)


_IMPORT = re.compile(r"^\s*(?:import|from)\s+(\w+)", re.M)


def _probed(d: Decision, f: FileFacts, i: int) -> set[str]:
    """The top-level packages the decision imports itself where arm `i` is taken (underscores
    dropped): those the arm's code imports or calls into, and, for a predicate's answer, those its
    function imports (`try: import deep_gemm` before `return major >= 9`): what it probes for."""
    roots = {m.split(".")[0] for m in d.arms[i].reaches}
    if d.kind == "return":
        name = d.context.rsplit(".", 1)[-1]
        for h in f.helpers:
            if h.name == name and h.kind == "def":
                roots.update(_IMPORT.findall("\n".join(h.source)))
    return {r.lower().replace("_", "") for r in roots}


def _probe_needs(d: Decision, f: FileFacts, i: int, probed: set[str]) -> list[tuple[tuple[str, ...], str]]:
    """A predicate's `True` is the library it imports being usable: the needs of that library."""
    if d.kind != "return" or d.arms[i].summary not in ("returns True", "carries on (returns True)"):
        return []
    out: list[tuple[tuple[str, ...], str]] = []
    for lib in evidence.LIBRARIES:
        if lib.replace("_", "") in probed:
            seen = f"'{lib}' (imported by {d.context.rsplit('.', 1)[-1]}())"
            out += [(n, seen) for n in evidence.needs_in(lib)]
    return out


def _ported(lib: str, arch: ArchSpec, reg: Registry | None) -> bool:
    """Does the scanned tree have code of the library for the target's family (Registry.ports)?"""
    return reg is not None and reg.ports(lib, arch.cc, arch.facts.major, arch.facts.minor)


_SETS_FLAG = re.compile(r"^sets self\.(\w+) = True$")


def _flag_guarded(arm: Arm, f: FileFacts, reg: Registry | None) -> list[tuple[tuple[str, ...], str]]:
    """What the code a flag the arm sets lets run needs (`self.supports_prefill = True`, then `if
    not self.supports_prefill: raise` and `from ...kda_blackwell import chunk_kda_cutedsl` in
    another method: judging.flagguards): read from what it imports there, or, for a name a
    package's `__init__` defines, from the package's own modules when every one of them that
    needs anything needs it."""
    hit = _SETS_FLAG.match(arm.summary)
    names = f.flag_imports.get(hit[1], ()) if hit is not None else ()
    if hit is None or not names or reg is None:
        return []
    said = f", imported past `if not self.{hit[1]}:`"
    out: list[tuple[tuple[str, ...], str]] = []
    for name in names:
        needs, where, _ = reg.callees.needs([name])
        if not needs:
            needs, where = _package_needs(name.rpartition(".")[0], reg)
        out += [(need, f"{seen}{said}") for need, seen in zip(needs, where, strict=True)]
    return out


def _package_needs(package: str, reg: Registry) -> tuple[list[tuple[str, ...]], list[str]]:
    """The one need every module of `package` that needs or spells anything shares, with where one
    read it (`kda_blackwell/kernel_h.py` calling `_tcgen05.alloc`); nothing when they differ or
    none does."""
    read: list[tuple[str, list[tuple[str, ...]], list[str]]] = []
    for name, m in reg.callees.by_module.items():
        if name.startswith(package + "."):
            needs, where = [*m.needs, *m.spelled], [*m.needs_from, *m.spelled_from]
            if needs:
                read.append((name, needs, where))
    if not read:
        return [], []
    shared = set(read[0][1])
    for _, needs, _ in read[1:]:
        shared &= set(needs)
    if not shared:
        return [], []
    need = sorted(shared)[0]
    name, needs, where = read[0]
    return [need], [f"{where[needs.index(need)]} in {name}, a module of {package}"]


def _handed(arm: Arm) -> list[tuple[tuple[str, ...], str]]:
    """The arch-named kernel class the arm imports and hands back (`returns
    GroupedGemmKernelSm100Fp8`): read apart from its code's words, where the module path
    (`kernel_sm100_fp8`) already gave that need in a spelling that alone is no direct evidence."""
    if arm.test is None:
        return []
    named = [m.rsplit(".", 1)[-1] for m in arm.reaches]
    needs, where = evidence.kernel_classes(" ".join(n for n in named if re.search(rf"\b{n}\b", arm.summary)))
    return [(n, f"{w} (the class it hands back)") for n, w in zip(needs, where, strict=True)]


def _imported_kernel(arm: Arm, seen: str) -> str:
    """The module the arm's own code imports whose name the need was read from, when that name
    is an arch's (`from flash_attn.cute.flash_fwd_sm100_fp4 import FlashAttentionForwardSm100`):
    the path loads that arch's kernel, not a flag or a family named in passing; else ""."""
    word = _quoted(seen).lower()
    if not _ARCH_MODULE.search(word):
        return ""
    for used in arm.uses:
        parts = used.split(".")
        for end in range(len(parts) - 1, 0, -1):
            if word in parts[end - 1].lower():
                return ".".join(parts[:end])
    return ""


_ARCH_MODULE = re.compile(r"sm_?(?:90a?|10[03]a?)(?![0-9])")  # `flash_fwd_sm100_fp4`


def _quoted(seen: str) -> str:
    """The word an evidence string quotes (`'_sm100_fp4' (line 303)`), else ""."""
    return seen.split("'")[1] if "'" in seen else ""


def _direct(seen: str) -> bool:
    word = _quoted(seen) or seen
    if seen.endswith("in a comment"):
        # a comment that names the instructions says what the code uses ("uses tcgen05/TMA"); one
        # naming a kernel family (`FA3 impl behind torch's flash op`) may only say what else exists
        return any(d in word.lower() for d in _INSTRUCTIONS)
    return any(d in word.lower() for d in _DIRECT) or re.search(r"Sm(?:10[03]|90)", word) is not None
