"""gate-excludes-arch: the target reaches a generic, fallback or error outcome of a decision while
a sibling arch reaches a positive outcome of its own.

Medium: the target loses a path the evidence says it could run. High: the target's only outcome
is an error (a raise, a failed assert) where the sibling's is not. Low (an expected gap): the
sibling's path needs a feature the target lacks, named with what it was read from. No finding
when the target has an arm of its own, or when what it misses is a restriction (a raise, a
refusal, a downgrade): being left out of that is good for it.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from capgap.arch import ArchFacts, ArchSpec, all_facts, cc_key
from capgap.findings import Finding
from capgap.judging import (
    callees,
    callers,
    choices,
    decider,
    evidence,
    fixups,
    kernelmodules,
    keyed,
    namedarchs,
    newer,
    outcomes,
    prose,
    refusedfirst,
    remarks,
)
from capgap.judging.basis import decision_text
from capgap.judging.decider import names_generation
from capgap.judging.reach import Reached, open_ended, pure, reached, truth
from capgap.judging.records import Arm, Decision, FileFacts
from capgap.judging.registry import Registry
from capgap.judging.statements import none_test, short
from capgap.judging.symbolic import evaluate, tri
from capgap.judging.validations import Verdict

RULE_ID = "gate-excludes-arch"


def siblings(target: ArchFacts) -> list[ArchFacts]:
    """The archs whose own paths a target may lack: its own generation and the ones since Hopper
    (an Ampere-only special case is nothing a Blackwell card loses)."""
    floor = min(target.major, 9)
    return [a for a in all_facts().values() if a.major >= floor and a.cc != target.cc]


def _refused_as_ampere_only(d: Decision, mine: tuple[int, ...]) -> bool:
    """Does every outcome of the target raise, one in words naming Ampere as where the feature works,
    outside code named for an arch (`SdpaFwdDslSm80`'s check of its own GPU, beside the tree's
    `Sm120` class, is that kernel's identity, not a feature withheld)?"""
    if _ARCH_IN_NAME.search(_CAMEL.sub("_", d.context).replace(".", "_")):
        return False
    if any(d.arms[i].action != "error" for i in mine):
        return False
    for i in mine:
        words = d.arms[i].stated or d.arms[i].summary
        ccs, majors = prose.named_archs(words)
        if "ampere" in words.lower() or "8" in majors or any(cc.startswith("8.") for cc in ccs):
            return True
    return False


def _left_out(
    r: Reached, mine: tuple[int, ...], good: set[str], sibs: list[ArchFacts], shared: bool
) -> dict[int, list[str]]:
    """The good outcomes `sibs` reach and the target does not, each with who reaches it; with
    `shared`, none of a GPU that may also reach the target's outcome."""
    missed: dict[int, list[str]] = {}
    for sib in sibs:
        reach = r.reach[sib.cc]
        if shared and set(mine) & set(reach):
            continue
        for i in reach:
            if i not in mine and r.decision.arms[i].action in good:
                missed.setdefault(i, []).append(sib.cc)
    return missed


def _oldest(r: Reached, arm: int) -> bool:
    """Does a pre-Ampere GPU (Volta, Turing) reach this arm? Then it is the generic path."""
    return any(arm in r.reach[a.cc] for a in all_facts().values() if a.major <= 7)


def _generic_for(r: Reached, arm: int, owners: list[str], target: str) -> bool:
    """Is the target's outcome `arm` a fallback next to the path `owners` get: an error, a
    refusal, or what GPUs older than all of them get too (an else that an earlier guard left to
    the target alone is the target's own)? A positive arm written for the target (`if cap == 90 or
    family(120)`, `if num_tokens == 0 or family(120): return out`) is its own, whoever shares it."""
    a = r.decision.arms[arm]
    if a.action != "positive":
        return True
    if _written_for(r, arm, owners, target):
        # (unless its own words say it is there because a thing is not supported on the target:
        # "On SM12.x, the FlashAttention wheels may not include support yet": a workaround)
        return bool(_unsupported_here(a, facts_of(target)))
    if _needs_what_only_it_has(a, owners, target):
        return False
    if _decided_later(r, arm, owners, target):
        return False
    if _oldest(r, arm) or _fallback_pick(a.summary):
        return True  # (an else that only picks a portable fallback is one, whoever else reaches it)
    first = min(owners, key=cc_key)
    # (the target's own generation sharing its arm, `elif major == 10:` read on a B200, is no older GPU)
    mine = cc_key(target)[0]
    return any(
        arm in r.reach[cc] for cc in all_facts() if cc_key(cc) < cc_key(first) and cc_key(cc)[0] != mine
    )


def _decided_later(r: Reached, arm: int, owners: list[str], target: str) -> bool:
    """Is `arm` the rest of a function past its guard clauses, where a later decision gives the
    target an answer of its own that no owner can reach (`if fa2_only(): return x == "nvfp4"` then
    `return family(100) and supports_trtllm()`: a B200 carries on to its own yes)?"""
    for peer in r.peers_below(arm):
        for k in peer.reach.get(target, ()):
            theirs = any(k in peer.reach.get(cc, ()) for cc in owners)
            if (
                not theirs
                and peer.decision.arms[k].action == "positive"
                and peer.value(k, target) is not False
            ):
                return True
    return False


def _answers_for_itself(
    d: Decision, j: int, owners: list[str], target: ArchFacts, f: FileFacts, reg: Registry | None
) -> bool:
    """Does the target's outcome answer with a test of the arch that may hold for the target and
    holds for no owner (`return is_device_capability_family(100)` past `if cap == 90: return not
    prefill`: a B200's own yes)?"""
    if reg is None or d.arms[j].action != "positive":
        return False
    expr = _outcome_expr(d.arms[j].summary)
    if expr is None:
        return False
    sym = evaluate(expr, reg.context(d.scope, f))
    if sym.kind != "pred":
        return False
    test = tri(sym)
    return test(target) is not False and all(test(facts_of(cc)) is False for cc in owners)


# Words for code built for the SM100 family only: arch-specific targets, and the libraries that ship
# (or JIT-compile) kernels for sm_90a/sm_100a/sm_103a alone (TRT-LLM-gen cubins, CUTLASS MLA,
# DeepGEMM, FlashMLA). A CuTe-DSL kernel named `Sm100...` is compiled for the GPU it runs on: not one.
_SM100_BUILD = re.compile(r"trtllm|cutlass_mla|deep_?gemm|flash_?mla|sm_?10[03][af](?![a-z0-9])", re.I)
# A kernel library named in words that require the SM100 family ("FlashInfer KDA prefill requires
# SM100 or SM103"): what it ships or JIT-builds for that family alone is no code for a Thor (its own
# support lists name 10.x; a CuTe-DSL kernel of the engine's own, compiled for the GPU it runs on, is
# not one)
_LIBRARY_BUILD = re.compile(rf"{_SM100_BUILD.pattern}|flashinfer", re.I)


def _loads_no_sm100_build(target: ArchFacts, owners: list[str]) -> bool:
    """Is the target one with tcgen05 outside the SM100 family (11.0), left out of a path every
    owner of which is of that family? Code built for that family does not load there."""
    return (
        target.tcgen05
        and target.major != 10
        and any(facts_of(cc).major == 10 for cc in owners)
        and all(facts_of(cc).major != target.major for cc in owners)
    )


def _needs_what_only_it_has(a: Arm, owners: list[str], target: str) -> bool:
    """Does the target's arm run what the target has and none of the owners has (FA3's wgmma kernels,
    the arm an H100 takes where Blackwell is given Triton)? That is its own path, no fallback."""
    mine = facts_of(target)
    theirs = [facts_of(cc) for cc in owners]
    return any(
        set(n) <= _MMA_FAMILIES and not evidence.lacking([n], mine) and not evidence.had_by(n, theirs)
        for n in a.needs
    )


# A generation's own tensor-core instructions: an arm that runs kernels of one is that generation's
# (a dtype it names, `fp4`, is no kernel family: `dtype.startswith("fp4")` checks a setting)
_MMA_FAMILIES = {"wgmma", "tcgen05"}


def _shared(r: Reached, arm: int, owners: list[str], target: str) -> bool:
    """Does the target only may take the arm, as every one of the owners may (its test hangs on
    more than the arch for all of them: `if cfg.speculative_algorithm is not None:`)?"""
    if r.decision.arms[arm].test is None or r.value(arm, target) is not None:
        return False
    return all(arm in r.reach[cc] for cc in owners)


def _written_for(r: Reached, arm: int, owners: list[str], target: str) -> bool:
    """Does the arm's own test hold for the target, for none of the owners, and for no GPU older
    than Ampere (what `cap != (9, 0)` also admits is everything else, not the target)?"""
    if r.decision.arms[arm].test is None or r.value(arm, target) is not True:
        return False
    old = [cc for cc, a in all_facts().items() if a.major <= 7]
    return all(r.value(arm, cc) is not True for cc in [*owners, *old])


# What an arm does when it only tunes: answers with a literal (a number, a flag, a tuple of numbers:
# `(8, 128 * 1024)`), or reorders a preference list.
_TUNES = re.compile(
    r"^(?:carries on \()?(?:returns|gives) (?:True|False|-?\d[\d.]*|\(-?\d[\d.\s*+/,-]*\))\)?$"
    r"|^(?:calls \w*(?:move|insert|prefer|priorit|sort|order)\w*\(\)(?:, |$))+",
    re.I,
)


def _tuning(summary: str) -> bool:
    """Does the outcome only answer with a literal or reorder a list (`carries on (calls next(),
    calls copy(), calls insert())`: what the rest of a block does, read as it is)?"""
    summary = _unwrapped(summary)
    parts = summary.split(", ")
    orders = [bool(_REORDERS.search(part)) for part in parts]
    # the reordered list handed back (`returns out`) is part of the reordering
    return bool(_TUNES.search(summary)) or all(
        done or (any(orders) and _HANDS_BACK.match(part)) for done, part in zip(orders, parts, strict=True)
    )


_REORDERS = re.compile(r"move|insert|prefer|priorit|sort|order|^calls (?:next|copy)\(\)$")
_HANDS_BACK = re.compile(r"^returns \w+$")


def _unported(
    needs: list[tuple[str, ...]], seen: list[str], target: ArchFacts, reg: Registry | None, d: Decision
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The needs less those read from the name of a kernel library (`deep_gemm.m_grouped_...`)
    whose kernel sources for the target's family the tree holds (its vendored `sm120_*.cuh`; an
    engine's own `deep_gemm_sm120.py` adapter is no port of the library): the upstream fact about
    the library is no evidence against a copy that runs there, unless the decision names a kernel
    of it the port lacks (`mega_mhc`, only in `sm100_mega_mhc.cuh`)."""
    if reg is None or len(needs) != len(seen):
        return needs, seen

    def ported(word: str) -> bool:
        lib = evidence.library_of(word)
        own, lacked = reg.kernels(lib, target.cc, target.major, target.minor) if lib else ((), ())
        return bool(own) and not any(k in _decision_words(d) for k in lacked)

    kept = [k for k, word in enumerate(seen) if not ported(word)]
    return [needs[k] for k in kept], [seen[k] for k in kept]


def _on_the_target_s_way(
    r: Reached, arm: int, needs: list[tuple[str, ...]], seen: list[str], target: ArchFacts
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The needs less those read inside a branch of a later decision of the function, nested in
    the arm, that the target would not take and some GPU taking the arm does not either: axolotl's
    `if major not in (9, 10, 11): return False` ... `if major in (10, 11): _sm100_backward_supported()`
    says what 10.x and 11.0 run beyond 9.0's path, not what 12.0 would run if let in."""
    body = r.decision.arms[arm].body
    takers = [cc for cc in r.archs_reaching(arm) if cc != target.cc]
    aside: list[tuple[int, int]] = []
    for peer in r.peers:
        if not body[0] <= peer.decision.line <= body[1]:
            continue
        for j, nested in enumerate(peer.decision.arms):
            theirs = [cc for cc in takers if j not in peer.reach.get(cc, ())]
            if nested.body != (0, 0) and j not in peer.reach.get(target.cc, ()) and theirs:
                aside.append(nested.body)
    if not aside:
        return needs, seen
    kept = [k for k, word in enumerate(seen) if not _read_within(word, aside)]
    return [needs[k] for k in kept], [seen[k] for k in kept]


def _read_within(seen: str, spans: list[tuple[int, int]]) -> bool:
    """Was the need read on a line (`... (line 175)`) inside one of the spans?"""
    at = _READ_ON.search(seen)
    return at is not None and any(first <= int(at[1]) <= last for first, last in spans)


_READ_ON = re.compile(r"\(line (\d+)\)")  # how judging.extract words where in the file evidence was read


def _decision_words(d: Decision) -> str:
    """What the decision spells: its function, tests and outcomes (lowercased, no underscores)."""
    tests = [ast.unparse(a.test) for a in d.arms if a.test is not None]
    return " ".join([d.context, d.source, *tests, *(a.summary for a in d.arms)]).lower().replace("_", "")


def _asks_device(d: Decision, f: FileFacts, reg: Registry | None) -> bool:
    """Does the decision's module ask the GPU it runs on, itself or through a helper of another
    module it calls in a test (`if _fused_on_blackwell():`, defined where the device is read)?"""
    if f.asks_device:
        return True
    for arm in d.arms:
        for node in ast.walk(arm.test) if arm.test is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in f.imports:
                source = reg.callees.resolve(f"{f.imports[node.func.id]}.{node.func.id}") if reg else None
                if source is None or source.asks_device:
                    return True
    return False


# The arch a function's name says it asks about: `is_sm100a_supported`, `is_sm12x_supported`.
_ARCH_IN_NAME = re.compile(r"(?:^|_)sm_?(\d{1,2})(?:\d|x)[a-z]?(?=_|$)", re.I)


def _fails_where_others_never(r: Reached, mine: tuple[int, ...], target: ArchFacts) -> tuple[int, ...]:
    """The target's arms, or only those that raise where a GPU of another generation never
    reaches one and the oldest GPUs do: `if use_fp4 and not is_family(100): raise` sends the
    target either way, by a setting, and what it loses is the setting that fails on every GPU
    but the ones named. Not a requirement written for newer GPUs or for the target itself (`if
    cap >= 10 and cuda < 13: raise`, `if is_sm120 and cudnn < 9.14: raise`), which no pre-Hopper
    GPU meets: a condition of the path, not the target left out of it. Nor a check of a setting
    by name (`if backend == "fast_mha" and not is_sm100: raise`), which is judged where a path
    picks that name (judging.validations)."""
    errors = set(i for i in mine if r.decision.arms[i].action == "error")
    if not errors or len(errors) == len(mine) or r.decision.subjects:
        return mine
    if not any(_oldest(r, i) for i in errors):
        return mine
    never = any(
        r.reach.get(sib.cc) and not errors & set(r.reach[sib.cc])
        for sib in siblings(target)
        if sib.major != target.major
    )
    return tuple(sorted(errors)) if never else mine


def _arch_named(d: Decision) -> bool:
    """Is the predicate named for an arch, a generation or a product (`is_sm90`, `is_hopper`,
    `using_b200`)? Its name says which GPU it asks about, so its callers hold the decisions (most
    call it on lines whose hint words the statement cut keeps); one named for what it means
    (`is_deep_select_supported`) that no decision of the scan asks is judged where it is written."""
    return bool(_GATEISH_NAME.search(d.context.rsplit(".", 1)[-1]))


_GATEISH_NAME = re.compile(
    r"capab|(^|_)sm_?\d|(^|_)sm($|_)|(^|_)cc($|_)|major|arch|blackwell|hopper|ampere|(^|_)ada($|_)"
    r"|(^|_)(?:gb|[abhl])\d{2,3}($|_)|thor|spark",  # products: `using_b200()`, `is_h100`, `_is_gb300`
    re.I,
)


def _identity_predicate(r: Reached) -> bool:
    """Is the decision a predicate that answers whether the GPU is the one its name names (every
    arch it may say yes to is of that generation)? Its callers hold the decisions."""
    name = r.decision.context.rsplit(".", 1)[-1]
    named = {int(m) for m in _ARCH_IN_NAME.findall(name)}
    if not named:
        return False
    yes = [i for i, arm in enumerate(r.decision.arms) if arm.action == "positive"]
    admitted = [cc for cc, arms in r.reach.items() if any(i in arms for i in yes)]
    return bool(admitted) and all(facts_of(cc).major in named for cc in admitted)


def _legacy_path(r: Reached, arm: int, mine: tuple[int, ...]) -> bool:
    """Is the sibling's path what pre-Ampere GPUs get too, while the target shares datacenter
    Blackwell's outcome (`use_marlin = not is_blackwell`, with 12.x among the Blackwells)? The
    target is moved on with its generation, not left out of a path written for someone."""
    if not _oldest(r, arm) or any(r.decision.arms[j].action in {"error", "reject"} for j in mine):
        return False  # an error all Blackwells share is no generation's path
    if r.decision.arms[arm].summary.startswith("sets ("):
        return False  # `a, b = constraints(cc)` unpacks a helper's answer (it may raise): no flag
    return any(a.major == 10 and set(r.reach[cc]) == set(mine) for cc, a in all_facts().items())


def _sized_down_for_smaller(r: Reached, arm: int, target: ArchFacts) -> bool:
    """Does the arm only set sizes (tiles, stages, warps: numbers) for GPUs that all have less
    shared memory per block than the target (`if major >= 12: bn, warps, stages = (32, 4, 2)`,
    "SM120's 100 KB cannot hold BN=64")? It shrinks the kernel to fit them; the target, with room
    for the larger default, loses nothing by keeping it."""
    if not _sizes_only(r.decision.arms[arm].summary):  # the summary's words first: most arms stop here
        return False
    owners = r.archs_reaching(arm)
    return bool(owners) and all(facts_of(cc).smem_per_block_kb < target.smem_per_block_kb for cc in owners)


# an outcome that only sets numbers: `sets bn, warps, stages = (64, 4, 3) if G == 2 else (32, 4, 2)`,
# `if Lq <= 128: BLOCK_M, BLOCK_N = (64, 128) elif ...`, `gives 16`; no call, string or error
_GIVES = re.compile(r"^(?:gives|returns|sets [\w.]+(?:, [\w.]+)* =) (.*)$")
_SET_IN_BRANCH = re.compile(r"(?<![=<>!])=(?!=) *(\([^()]*\)|[^\s,:]+)")
_CALL_OR_ACT = re.compile(r"\w\(|\b(?:calls|raises|logs|skips)\b")


def _sizes_only(summary: str) -> bool:
    summary = _unwrapped(summary)
    if _value(summary):
        return True
    if _CALL_OR_ACT.search(summary):
        return False
    if summary.startswith("if "):  # a nested decision, cut short: each value it sets is a number
        given = [v for v in _SET_IN_BRANCH.findall(summary) if not v.endswith("...")]
        return bool(given) and all(_numbers_only(v) for v in given)
    what = _GIVES.match(summary)
    return what is not None and _numbers_only(what[1])


def _numbers_only(text: str) -> bool:
    """Numbers, tuples of them, constants' names, and a choice between such (`64 if G == 2 else 32`)."""
    if "..." in text:
        return False
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False

    def numeric(n: ast.expr) -> bool:
        if isinstance(n, ast.IfExp):
            return numeric(n.body) and numeric(n.orelse)
        if isinstance(n, (ast.Tuple, ast.List)):
            # `(*common[1:], (256, 128, 1))`: a spread of the shared sizes beside sizes of its own
            sizes = [e for e in n.elts if not _spread(e)]
            return bool(sizes) and all(numeric(e) for e in sizes)
        if isinstance(n, (ast.UnaryOp, ast.BinOp)):
            return all(numeric(c) for c in ast.iter_child_nodes(n) if isinstance(c, ast.expr))
        if isinstance(n, ast.Constant):
            return isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        return isinstance(n, ast.Name) and bool(_CONSTANT.match(n.id))

    return numeric(node)


def _spread(node: ast.expr) -> bool:
    """`*common`, `*common[1:]`: a name's items spread into a tuple."""
    if not isinstance(node, ast.Starred):
        return False
    value = node.value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        value = value.value
    return isinstance(value, ast.Name)


def _another_generations_case(
    r: Reached,
    owners: list[str],
    mine: tuple[int, ...],
    target: ArchFacts,
    f: FileFacts,
    reg: Registry | None,
) -> bool:
    """A path only archs of another generation than the target's and datacenter Blackwell's get
    (a Hopper-only workaround, tuning or kernel; a Thor-only tile cap) that datacenter Blackwell
    (10.x) shares the target's outcome instead of: that generation's special case, which the
    target's newest siblings go without too. Not when the predicate is or-ed with one of its
    module's that says yes to 10.x: they get the caller's yes."""
    if target.major < 10 or any(facts_of(cc).major in (10, target.major) for cc in owners):
        return False
    blackwell = _blackwell()
    if not blackwell or any(not set(r.reach[cc]) <= set(mine) for cc in blackwell):
        return False
    return not _partner_admits(r.decision, f, reg, blackwell, target.cc)


def _generation_words(owners: list[str]) -> str:
    """How a special case's owners are named: "GPUs before Blackwell" (9.0 and older), or the
    archs themselves (a Thor-only `11.0`)."""
    if all(facts_of(cc).major < 10 for cc in owners):
        return "GPUs before Blackwell"
    return ", ".join(owners)


def _blackwell() -> list[str]:
    """The datacenter Blackwell (10.x) archs the facts know."""
    return [cc for cc, a in all_facts().items() if a.major == 10]


def _partner_admits(d: Decision, f: FileFacts, reg: Registry | None, archs: list[str], target: str) -> str:
    """`return _varlen_ok() or _flattened_ok()`: the predicate of its module `d`'s is or-ed with that
    says yes to every one of `archs` and not to the target ("" if none)."""
    name = callers.helper_name(d)
    partners = f.either.get(name, ()) if reg is not None and d.kind in ("return", "guards", "chain") else ()
    for other in f.decisions:
        if other is d or callers.helper_name(other) not in partners:
            continue
        got = reached(other, reg.context(other.scope, f)) if reg is not None else None
        if got is None:
            continue
        says_yes = {i for i, arm in enumerate(other.arms) if arm.summary in _YES}
        if all(says_yes & set(got.reach[cc]) for cc in archs) and not says_yes & set(got.reach[target]):
            return callers.helper_name(other)
    return ""


def _generation_variant(r: Reached, mine: tuple[int, ...], owners: list[str], target: ArchFacts) -> str:
    """The outcome of the target's, written for datacenter Blackwell by name (`calls
    es_sm100_mxfp8_mm()`), when the path it misses is Hopper's alone and every 10.x GPU reaches
    just what the target does: a dispatch by generation, whose Hopper arm runs Hopper's kernel
    ("" otherwise)."""
    if target.major < 10 or any(facts_of(cc).major != 9 for cc in owners):
        return ""
    blackwell = [cc for cc, a in all_facts().items() if a.major == 10]
    if not blackwell or any(set(r.reach[cc]) != set(mine) for cc in blackwell):
        return ""
    arms = r.decision.arms
    named = (
        arms[i].summary for i in mine if arms[i].action == "positive" and _blackwell_named(arms[i].archs)
    )
    return next(named, "")


def _per_generation(
    r: Reached, mine: tuple[int, ...], arm_i: int, target: ArchFacts
) -> tuple[tuple[str, ...], str] | None:
    """The need of the missed arm where the decision is a dispatch by generation: two or more
    positive arms, each reached by GPUs of one generation only (`capability == (9, 0)`, `capability
    in ((10, 0), (10, 3))`), and the target's only outcome the last-resort raise after them, whose
    words name those very generations as what the feature requires ("Skip Softmax requires Hopper
    SM90 or Blackwell SM100/SM103/SM107"). Each generation runs a kernel of its own: the missed
    arm's needs the MMA its generation has and the target lacks. None otherwise."""
    d = r.decision
    if (
        d.kind != "guards"
        or not mine
        or any(not d.arms[i].summary.startswith("carries on (raises") for i in mine)
    ):
        return None
    majors: dict[int, set[int]] = {}
    for i, arm in enumerate(d.arms):
        if i in mine or arm.action != "positive" or arm.test is None:
            continue
        owners = {facts_of(cc).major for cc in r.archs_reaching(i) if r.value(i, cc) is not False}
        if len(owners) != 1:
            return None
        majors.setdefault(owners.pop(), set()).add(i)
    words = d.arms[mine[0]].summary.partition("'")[2].rstrip(")").rstrip("'")
    _, named = namedarchs.need_of(words, target)
    named_majors = {facts_of(cc).major for cc in named}
    if len(majors) < 2 or set(majors) != named_majors or target.major in named_majors:
        return None
    mine_major = next((m for m, arms in majors.items() if arm_i in arms), None)
    if mine_major is None:
        return None
    need, _ = namedarchs.need_of(
        " ".join(f"sm{cc.replace('.', '')}" for cc in named if facts_of(cc).major == mine_major), target
    )
    if need is None:
        return None
    lines = ", ".join(f"{m}.x: line {d.arms[min(arms)].line}" for m, arms in sorted(majors.items()))
    return need, (
        f"a dispatch giving each generation a kernel of its own ({lines}), every other GPU refused "
        f"in words naming those generations ('{short(words, 90)}')"
    )


def _blackwell_named(numbers: tuple[str, ...]) -> bool:
    """Does one of the arch numbers an arm's code names mean datacenter Blackwell (`100`, `10x`)?"""
    return any(n in {"100", "103", "10x"} for n in numbers)


# A sentence saying the archs let in are the ones checked, not the ones able ("limit the prototype
# to the SM90 architecture validated end to end"): newer GPUs are left out for want of a test run.
_VALIDATED_ONLY = re.compile(r"validated|verified|tested|prototype", re.I)


def _only_validated(r: Reached, f: FileFacts) -> str:
    """The sentence of the decision, or of the file's helper its test calls, that says it admits only
    what was validated ("" when none does)."""
    called = {name.split(".")[-1].rstrip("()") for i in range(len(r.syms)) for name in r.names(i)}
    sentences = [s for s, _ in _sentences_around(r.decision)]
    for other in f.decisions:
        if other.context.split(".")[-1] in called:
            sentences += [s for s, _ in _sentences_around(other)]
    return next((s.rstrip("\"' ") for s in sentences if _VALIDATED_ONLY.search(s)), "")


# Implementations that run on any CUDA GPU: a sibling sent to one of them is worked around, and
# the target loses no fast path by being left out of that.
_FALLBACKS = {"triton", "torch", "torch_native", "pytorch", "sdpa", "naive", "native", "eager", "reference"}
_PICKS = re.compile(r"^(?:carries on \()?(?:returns|gives|sets [\w.\[\]']+ =) ")
_PICKED = re.compile(r"'([\w\-]+)'(?!\s*:)")  # a quoted value, not a dict key
_KEYS = re.compile(r"(?<=\w)\[[^\]]*\]")  # a subscript (`overrides['key']`), not a list


def _one_mma_family(r: Reached, mine: tuple[int, ...], owners: list[str], target: ArchFacts) -> str:
    """The MMA family (tcgen05) whose GPUs, spanning more than one generation (10.x and Thor's
    11.0), are exactly those that get the path, when the target lacks it and the decision has no
    test of its own for the target (`if cap >= (12, 0): return False, "not supported ... yet"`
    says the authors know of it); "" otherwise. One generation (`major == 10`, Hopper's 9.0 alone)
    is how code names datacenter Blackwell or Hopper for any reason, tuning included."""
    for family in sorted(_MMA_FAMILIES):
        having = [cc for cc, facts in all_facts().items() if getattr(facts, family)]
        if sorted(owners, key=cc_key) != sorted(having, key=cc_key) or getattr(target, family):
            continue
        if len({facts_of(cc).major for cc in having}) < 2:
            continue
        if any(r.decision.arms[i].test is not None and r.value(i, target.cc) is True for i in mine):
            return ""
        return family
    return ""


def _fallback_pick(summary: str) -> bool:
    """Does the outcome only choose a portable fallback (`returns {'attention_backend': 'triton'}`)?"""
    summary = _KEYS.sub("", summary)  # `sets overrides['attention_backend'] = ...`: a key, no pick
    picked = _PICKED.findall(summary) if _PICKS.match(summary) and "..." not in summary else []
    return bool(picked) and all(p.lower() in _FALLBACKS for p in picked)


# The setting an arm assigns (`sets self.fmha_backend = 'cutlass'` -> fmha_backend)
_SETTING = re.compile(r"sets (?:[\w]+\.)*(\w+)(?:\[[^\]]*\])? =")


def _checked(arm: Arm, theirs: list[Arm], cc: str, owners: list[str], reg: Registry) -> Verdict | None:
    """What the engine's own checks of the names a path picks (`'trtllm_mha'`) say of the target;
    else, when the path picks backends by enum member (`[Backends.RAGGED, Backends.FLASH]`), what
    the own checks of those the target's path does not pick say: a refusal when each refuses it."""
    summary = arm.summary
    names = _PICKED.findall(summary) if _PICKS.match(summary) or "=" in summary else []
    lost = [p for p in arm.picks if not any(p in other.picks for other in theirs)]
    # an enum member the path alone picks (`Backends.TRTLLM_ATTN`), as the string a check of the
    # setting compares (`if backend_upper == "TRTLLM_ATTN": ... raise`)
    names += [p.rsplit(".", 1)[1] for p in lost if "." in p]
    setting = _SETTING.search(summary)
    verdicts = [
        v
        for name in dict.fromkeys(names)
        if (v := reg.validations.verdict(name, cc, owners, setting[1] if setting else ""))
    ]
    checked = next((v for v in verdicts if v.refused), verdicts[0] if verdicts else None)
    if (checked is None or not checked.refused) and lost:
        refusals = [reg.backends.verdict(p, cc, owners) for p in lost]
        if all(refusals):
            return refusals[0]
    return checked


_SETS_ONE = re.compile(r"sets ([\w.]+) = ([\w.]+)$")


def _forwards_checked(arm: Arm) -> str:
    """The value a branch only hands on (`lens_2d = meta.lens_2d`) where its own test requires that
    value to be set (`... and meta.lens_2d is not None`), else "": whether it is set, and for which
    GPUs, is decided where it is assigned (SGLang's DeepGEMM-native [B, next_n] schedule, built
    for SM100 alone and reused under CUDA-graph replay)."""
    hit = _SETS_ONE.match(arm.summary)
    if hit is None or arm.test is None or hit[1] == hit[2]:
        return ""
    for node in ast.walk(arm.test):
        asked = none_test(node)
        if asked is not None and asked[1] and ast.unparse(asked[0]) == hit[2]:
            return hit[2]
    return ""


def _refused_by_query(r: Reached, arm: int, target: ArchFacts, owners: list[str]) -> Verdict | None:
    """A conjunct of the path's test that asks a helper with constant arguments and answers False for
    the target, where a GPU that gets the path may be answered yes: the helper turns the target
    away from this path by itself (SGLang/vLLM's `supports_trtllm_attention(is_prefill=True)`, which
    gives SM12x the XQA decode kernel and no prefill), so the arch test beside it costs nothing."""
    for text, line, sym in r.queries[arm]:
        if truth(sym, target) is False and any(truth(sym, facts_of(cc)) is not False for cc in owners):
            return Verdict(True, f"'{short(text, 80)}' (line {line})", "answers False")
    return None


def _given(arm: Arm, theirs: list[Arm]) -> list[str]:
    """The strings the path gives settings (in its code or its summary) that no outcome of the
    target's gives as well."""
    mine = {v for a in theirs for v in (*a.values, *_PICKED.findall(a.summary))}
    return [v for v in dict.fromkeys((*arm.values, *_PICKED.findall(arm.summary))) if v not in mine]


# Words that make a sentence about which archs were measured, tuned or validated, not about what the
# hardware can run: no need is read from them.
_NOT_A_NEED = re.compile(
    r"validat|\byet\b|tested|measur|tuned|tuning|faster|slower|benchmark|prefer|default|bit-exact|accuracy",
    re.I,
)


def _said_without(d: Decision, mine: tuple[int, ...], target: ArchFacts) -> str:
    """A sentence of the comments around the decision, or of the target's own branches, that names
    the target and says it goes without (keyed.goes_without)."""
    sentences = [sentence for sentence, _ in _sentences_around(d)]
    sentences += [note for j in mine for note in d.arms[j].notes]
    return keyed.goes_without(sentences, target)


_TUNING_WORDS = re.compile(
    r"\bfor (?:\w+ )?tuning\b|\btuned (?:on|for)\b|\blaunch (?:config|heuristic)", re.I
)


def _said_tuning(d: Decision, sibs: list[str]) -> str:
    """The comment at the decision saying it is there for tuning ("for kernel tuning", "tuned on
    GB300"), when the GPUs that get the path are of one generation ("" otherwise)."""
    if len({facts_of(cc).major for cc in sibs}) != 1:
        return ""
    for sentence, where in _sentences_around(d):
        # the decision's own comment: a module's docstring on its measured tables speaks of them all
        if where.startswith("the comment") and _TUNING_WORDS.search(sentence):
            return f"'{short(sentence, 100)}' ({where})"
    return ""


def _sentences_around(d: Decision) -> list[tuple[str, str]]:
    """The sentences naming archs around a decision (`Decision.prose`), each with where it stands."""
    return [(sentence, where) for where, _, sentence in (entry.partition("\t") for entry in d.prose)]


def _prose(arm: Arm, d: Decision) -> list[tuple[str, str]]:
    """The sentences naming archs that may say what the path is written for: the branch's own
    words first, then the comments and docstrings around the decision."""
    out = [(arm.said, "the branch's own words")] if arm.said else []
    out += _sentences_around(d)
    # each clause apart: "supports SM100 and SM103, but rejects SM90 during validation" states a need
    return [
        (words, where)
        for sentence, where in out
        for words in prose.clauses(sentence)
        if (_REQUIRES.search(words) or _LABEL.match(words))
        and not _NOT_A_NEED.search(words)
        and not _OPEN_ENDED.search(words)
    ]


# A sentence states what a path needs when it says so ("requires SM100/SM103", "SM10x only",
# "supported on Hopper", "built for sm100/sm103"), not when it tells what happens on an arch ("MiMoV2
# on SM100: attention_backend=fa4"); one that names an arch "and newer" covers the target's too.
_REQUIRES = re.compile(
    r"requir|\bonly\b|-only|exclusiv|\bsupport|built (?:only )?for|written for|specific|\bneeds?\b|\bmust\b",
    re.I,
)
# A comment that labels the path with the arch it belongs to: "SM90 FA4 fp8-KV path: ..."
_LABEL = re.compile(r"^sm[_ ]?\d{2,3}[a-z]?\b[\w \-/+.]{0,40}?\b(?:path|kernel|variant)\s*:", re.I)
_OPEN_ENDED = re.compile(
    # (`>= 2.8` after a library's name is its version, no arch)
    r"\bsm[_ ]?\d{2,3}[af]?\+|>=\s*(?:sm[_ ]?\d|\d{2,3}\b|(?:[7-9]|1[0-2])\.\d)"
    r"|(?:or|and) (?:newer|later|above)|onwards|\bplus\b",
    re.I,
)


# Words that make a sentence about a sibling's arch a measured preference or a workaround (not
# "tuned for": numbers tuned for a sibling are the target's tuning-only loss)
_PREFERENCE = re.compile(
    r"faster|slower|outrank|prefer|benchmark|workaround|work around|preempt"
    r"|fix-?up|not yet|issues? (?:on|with)|\bbug\b|aborts|\btuned for\b|more (?:effective|efficient)",
    re.I,
)


def _preference(arm: Arm, d: Decision, owners: list[str], target: ArchFacts) -> str:
    """A sentence near the decision that calls the owners' path a measured preference or a
    workaround of theirs (it names archs that get the path and none of the target's family), or
    that says the target goes its own way here."""
    own = {cc for cc, a in all_facts().items() if a.major == target.major}
    texts = [(n, "a comment in the branch") for n in arm.notes] + _sentences_around(d)
    for sentence, where in texts:
        ccs, majors = prose.named_archs(sentence)
        mine = bool(ccs & own) or str(target.major) in majors
        if mine and _OWN_WAY.search(sentence):
            # "SM120 uses a different kernel path where scales already include this factor"
            return f"'{short(sentence, 100)}' ({where}), which says {target.cc} goes its own way"
        if mine or not _PREFERENCE.search(sentence):
            continue
        # it speaks for every generation that gets the path ("performance-tuned for SM90" above a
        # set of 9.0, 10.0 and 10.3 says why 9.0 has it, not why datacenter Blackwell does)
        named = {cc.split(".")[0] for cc in ccs} | majors
        if {cc.split(".")[0] for cc in owners} <= named:
            return f"'{short(sentence, 100)}' ({where})"
    return ""


def _says_unsupported(
    r: Reached, mine: tuple[int, ...], owners: list[str], target: ArchFacts, reg: Registry | None
) -> tuple[str, str]:
    """The words of a target's arm written for it (its test holds for the target, for none of the
    owners) that name the target's arch and say the path is not supported there; or, where the
    tree holds code of what they say is unsupported for the target's family, "" and that code
    (sglang's "FlashAttention is not supported on SM12.x in this build" beside its own
    `flash_attention_v4_sm120.py`: the words are older than the port)."""
    for i in mine:
        said = _unsupported_here(r.decision.arms[i], target)
        if not said or not _written_for(r, i, owners, target.cc):
            continue
        unsupported = _UNSUPPORTED.search(said)
        port = _ported(said[: unsupported.start()], target, reg) if reg is not None and unsupported else ""
        if port:
            return "", f"'{short(said, 100)}', though the tree holds {port}"
        where = f"the branch written for {target.cc}"
        return f"'{short(said, 100)}' ({where}), which says {target.cc} goes its own way", ""
    return "", ""


def _unsupported_here(arm: Arm, target: ArchFacts) -> str:
    """The words of the arm, its strings or its comments, that name the target's family and say
    a thing is not supported there ("On SM12.x, the FlashAttention wheels may not include support
    yet"); "" when none do."""
    own = {cc for cc, a in all_facts().items() if a.major == target.major}
    for said in (arm.said or arm.summary, *arm.notes):
        if _UNSUPPORTED.search(said):
            ccs, majors = prose.named_archs(_FAMILY_DOT_X.sub(r"sm\1x", said))  # "SM12.x": the family
            if ccs & own or str(target.major) in majors:
                return said
    return ""


# A name in the words before "not supported": `FlashAttention`, `DeepGEMM`, `trtllm_gen`, `FA3`
_NAME = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z0-9_][A-Za-z0-9]*)+\b")


def _ported(subject: str, target: ArchFacts, reg: Registry) -> str:
    """Code, in the tree, for the target's family of a thing the words name (`FlashAttention`:
    `flash_attention_v4_sm120.py`), with its path; "" when there is none."""
    for name in _NAME.findall(subject):
        word = name.lower().replace("_", "")
        if len(word) < 3 or re.match(r"sm\d", word):
            continue
        path = reg.port_of(word, target.major, target.minor)
        if path:
            return f"{name} code for {target.major}.x ({path})"
    return ""


_FAMILY_DOT_X = re.compile(r"\bsm[_ ]?(\d{1,2})\.x\b", re.I)
_UNSUPPORTED = re.compile(
    r"not (?:yet )?supported|unsupported|does not support|not available"
    # ("the wheels may not include support yet")
    r"|(?:may|does|do) not (?:yet )?(?:include|have|ship) support",
    re.I,
)


# A sentence naming the target that says it has a path of its own here
# (and "this default table was tuned on GB300" read on a B200: what the target gets was tuned on
# its own generation)
_OWN_WAY = re.compile(
    r"(?:uses|takes|has) (?:a |its )?(?:different|own|separate)|\balready\b"
    r"|(?<!not )(?<!yet )(?<!never )\b(?:tuned|measured) on\b",
    re.I,
)


_CALLS = re.compile(r"\w\(")


# A function that says what its callers are required to do (`get_required_kv_cache_layout`,
# `requires_padding`): its answer for the owners is a constraint put on them, not a path the
# target goes without
_REQUIREMENT = re.compile(r"(?:^|_)(?:required|requires)(?:_|$)", re.I)


def _flag_weighed_for_target(r: Reached, arm: int, target: ArchFacts) -> int:
    """The line of a later test in the same function that reads the flag this arm sets together
    with the target's arch by name (`self._supports_tc = arch in ((10, 0), (10, 3))`, then `if not
    self._supports_tc and arch not in ((9, 0), (12, 0)): raise`): the authors let the target in
    without the flag, by name, so going without it is their choice for it (0 when none does)."""
    d = r.decision
    hit = outcomes.SETS_FLAG.match(d.arms[arm].summary) if d.kind == "flag" else None
    if hit is None:
        return 0
    for peer in r.peers:
        if peer.decision.line <= d.line:
            continue
        for other in peer.decision.arms:
            if other.test is None:
                continue
            reads = any(
                ast.unparse(n) == hit[1]
                for n in ast.walk(other.test)
                if isinstance(n, (ast.Name, ast.Attribute))
            )
            if reads and names_generation(other.test, target, decider.NAMES):
                return other.line
    return 0


def _given_elsewhere(r: Reached, arm: int, cc: str) -> bool:
    """Does another decision of the same function give the target this very path (`return
    split_h(x)` for Blackwell rows <= 384 above, `return split_h(x)` for Hopper here)?"""
    summary = r.decision.arms[arm].summary
    if not _CALLS.search(summary) or summary in _ANSWERS:
        return False
    for peer in r.peers:
        for j in peer.reach.get(cc, ()):
            other = peer.decision.arms[j]
            same = other.action == "positive" and other.summary == summary and other.test is not None
            if same and peer.value(j, cc) is not False:
                return True
    return False


def _routed_apart(r: Reached, arm: int, owners: list[str], target: str) -> str:
    """Where another decision of the same function gives the owners this very path and the target,
    instead, an arm written for it (`if is_sm120(): ... elif is_blackwell(): set_fa_ver(4)`): that
    arm, as "line N: what it does" ("" when none does). The authors decided for the target there;
    the path withheld again here is that decision repeated, not a path overlooked."""
    summary = r.decision.arms[arm].summary
    if not _CALLS.search(summary) or summary in _ANSWERS:
        return ""
    for peer in r.peers:
        if peer.decision.line >= r.decision.line:
            continue  # (a decision above this one: what the target was given before it gets here)
        mine = peer.reach.get(target, ())
        same = [
            j
            for j, other in enumerate(peer.decision.arms)
            if other.summary == summary
            and other.test is not None
            and j not in mine
            and any(j in peer.reach.get(cc, ()) for cc in owners)
        ]
        own = [k for k in mine if _written_for(peer, k, owners, target)]
        if same and own:
            k = peer.decision.arms[own[0]]
            return f"line {k.line}: {short(k.summary, 80)}"
    return ""


def _thresholds_only(summary: str) -> bool:
    """Does the outcome only compute numbers or compare them (`returns M <= (512 if low_wave else
    320)`, `sets lt_75pct_wave = n_blocks * 4 < num_sms * 3`): a calibration, no path or setting?"""
    parts = _unwrapped(summary).split(", ")
    return all(
        (what := _OUTCOME.match(part)) is not None
        and _DIGIT.search(what[1]) is not None
        and not _CALLS.search(what[1])
        and not re.search(r"['\"]", what[1])
        for part in parts
    )


_DIGIT = re.compile(r"\d")


def _family_branch(r: Reached, owners: list[str], target: ArchFacts) -> str:
    """An arm of another decision of the same function written for the target's family (`if
    is_sm120:` further down a per-arch heuristic: a test true for that family alone, or naming it
    and true for none of the owners), as "line N: its test": the function was written knowing the
    target, so what it withholds here is withheld on purpose ("" when none is)."""
    others = [cc for cc, a in all_facts().items() if a.major != target.major]
    named = re.compile(rf"(?<![a-z0-9])sm_?(?:{target.number}|{target.major}x)(?![0-9])", re.I)
    for peer in r.peers:
        for j, arm in enumerate(peer.decision.arms):
            if arm.test is None or peer.value(j, target.cc) is False:
                continue
            alone = peer.value(j, target.cc) is True and all(peer.value(j, cc) is False for cc in others)
            names = [
                n.id if isinstance(n, ast.Name) else n.attr
                for n in ast.walk(arm.test)
                if isinstance(n, (ast.Name, ast.Attribute))
            ]
            says = any(named.search(n) for n in names) and all(peer.value(j, cc) is not True for cc in owners)
            if alone or says:
                return f"line {arm.line}: `{short(ast.unparse(arm.test), 60)}`"
    return ""


def _deciding(
    r: Reached, arm: int, f: FileFacts, owners: list[str], target: str, reg: Registry | None
) -> tuple[tuple[str, ...], int] | None:
    """The names and line of the operand of the arm's test that tells the target from the owners."""
    test = r.decision.arms[arm].test
    if test is None or reg is None:
        return None
    return decider.deciding(test, reg.context(r.decision.scope, f), target, owners)


def _carved(
    r: Reached, arm: int, f: FileFacts, target: str, reg: Registry | None, failing: bool = False
) -> tuple[str, int] | None:
    """The operand of the arm's test that names the target's family to shut it out (decider.carve_out;
    `failing`: the target's outcome is an error, which a bare `assert major != 9` stays)."""
    test = r.decision.arms[arm].test
    if test is None or reg is None:
        return None
    return decider.carve_out(test, reg.context(r.decision.scope, f), target, unequal=not failing)


def _behind_refused_setting(d: Decision, target: ArchFacts, owners: list[str], reg: Registry | None) -> bool:
    """Does an if-test the decision sits in require a setting (`if decode_backend == "fa3":`) every
    value of which the target cannot have: the engine's own check refuses it there, or its name is
    a kernel family needing what the target lacks (FA3: wgmma)? Then the target never gets here."""
    for names in d.within:
        if names and all(_refused_name(name, target, owners, reg) for name in names):
            return True
    return False


# A setting's value that is its default (asked for by nobody)
_DEFAULT_WORDS = frozenset({"auto", "default", "none", "unset", ""})


def _chosen_setting(d: Decision) -> str:
    """The value an if-test the decision sits in requires a setting to have (`backend == "cutlass"`,
    `get_moe_runner_backend().is_cutlass()`), when none of the values it admits is a default: the
    decision runs only when a user asks for that ("" otherwise)."""
    for names in d.within:
        if names and not any(name.lower() in _DEFAULT_WORDS for name in names):
            return " or ".join(f"'{name}'" for name in names)
    return ""


def _refused_name(name: str, target: ArchFacts, owners: list[str], reg: Registry | None) -> bool:
    if evidence.lacking(evidence.needs_in(name.lower()), target):
        return True
    verdict = reg.validations.verdict(name, target.cc, owners) if reg is not None else None
    return verdict is not None and verdict.refused


# Branches of one flag that refuse before its flag reads as a restriction (fewer is a path's own
# argument checks)
_MIN_REFUSALS = 3


def _restricting_flag(r: Reached, arm_i: int, decider: int, f: FileFacts) -> str:
    """Words naming the flag the arm's test reads (`uses_sm100_trtllm_nvfp4`, or one its local
    definition reads: `uses_sm100_mixed_nvfp4 = uses_sm100_trtllm_nvfp4 and ...`) when most branches
    of its function that test it raise: the flag marks a configuration the engine restricts for
    the owners (a layout only their kernels keep), and an arm of it that only fits settings to
    that (gives them values, hands nothing back) is one more of those restrictions ("" otherwise)."""
    d, arm = r.decision, r.decision.arms[arm_i]
    if arm.test is None or not arm.values or _unwrapped(arm.summary).startswith(("returns", "gives")):
        return ""
    for flag in _local_flags(r.names(decider), d):
        refusals: list[Arm] = []
        others = 0
        for other in f.decisions:
            if other.context != d.context:
                continue
            for a in other.arms:
                if a.test is None or a is arm or flag not in _read_names(a.test):
                    continue
                if a.action == "error":
                    refusals.append(a)
                else:
                    others += 1
        if len(refusals) >= _MIN_REFUSALS and len(refusals) > others + 1:
            return (
                f"{len(refusals)} of the branches of {d.context.rsplit('.', 1)[-1]} that test "
                f"{flag} raise (line {refusals[0].line}: {short(refusals[0].summary, 80)})"
            )
    return ""


def _local_flags(names: tuple[str, ...], d: Decision) -> list[str]:
    """The deciding names assigned in the function (`flag = ...`), then the local names their
    definitions read: one level of flags built from flags."""
    local = d.scope.names
    flags = [n for n in names if n in local]
    for n in list(flags):
        flags += [m for m in _read_names(local[n]) if m in local and m not in flags]
    return flags


def _read_names(node: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


_SETS_NAME = re.compile(r"sets ([\w.]+) = '([\w\-]+)'")


def _apart(r: Reached, mine: tuple[int, ...], owners: list[str]) -> tuple[int, ...]:
    """The target's outcomes that none of the owners reach (`if not use_mla: ...` both reach is
    what a setting decides, not the arch)."""
    return tuple(i for i in mine if not any(i in r.reach[cc] for cc in owners))


def _default_fallback(
    d: Decision, taken: str, mine: tuple[int, ...], apart: tuple[int, ...] = ()
) -> str | None:
    """The setting whose default the decision picks (an enclosing test asks it to be unset), when
    the sibling's path sets it to a named implementation and the target's only ever to a portable
    fallback (`'triton'`); None otherwise. A function named for the default it answers
    (`get_default_attn_backend`) picks one by what it returns: every value the target's outcomes
    apart from the owners' give (`return "flashinfer"` inside its else as well) is a fallback."""
    returned = _RETURNS_NAME.match(taken)
    if returned is not None and _DEFAULT_RESOLVER.search(d.context.rsplit(".", 1)[-1]):
        if returned[1].lower() in _FALLBACKS:
            return None
        given = [v for i in apart for v in (*d.arms[i].values, *_RETURNS_NAME.findall(d.arms[i].summary))]
        return (
            f"what {d.context.rsplit('.', 1)[-1]}() answers"
            if given and all(v.lower() in _FALLBACKS for v in given)
            else None
        )
    theirs = _SETS_NAME.match(taken)
    if theirs is None or theirs[1] not in d.unset or theirs[2].lower() in _FALLBACKS:
        return None
    given = [v for i in mine for attr, v in _SETS_NAME.findall(d.arms[i].summary) if attr == theirs[1]]
    return f"{theirs[1]} unset" if given and all(v.lower() in _FALLBACKS for v in given) else None


def _resolver_own(d: Decision, taken: str, mine: tuple[int, ...]) -> str:
    """The named implementation a default resolver (`get_default_attn_backend`) can give the target
    where the sibling's answer is another named one (`return "flashinfer"` in the target's else
    beside SM100's `return "trtllm_mha"`): its own default, not a fallback ("" otherwise). `mine`:
    the target's outcomes the owners do not reach, else all of them (an else both may reach)."""
    returned = _RETURNS_NAME.match(taken)
    if returned is None or not _DEFAULT_RESOLVER.search(d.context.rsplit(".", 1)[-1]):
        return ""
    given = [v for i in mine for v in (*d.arms[i].values, *_RETURNS_NAME.findall(d.arms[i].summary))]
    named = [v for v in dict.fromkeys(given) if v.lower() not in _FALLBACKS and v != returned[1]]
    return named[0] if named and returned[1].lower() not in _FALLBACKS else ""


_RETURNS_NAME = re.compile(r"^(?:carries on \()?returns '([\w\-]+)'\)?$")
# a function named for the default it answers (`get_default_attn_backend`, `_default_backend`)
_DEFAULT_RESOLVER = re.compile(r"(?:^|_)default_\w*backend", re.I)


def _summaries(d: Decision, arms: tuple[int, ...]) -> list[str]:
    return [d.arms[i].summary for i in arms]


def facts_of(cc: str) -> ArchFacts:
    return all_facts()[cc]


_ANSWERS = {"returns True", "returns False", "carries on (returns True)", "carries on (returns False)"}
_YES = {"returns True", "carries on (returns True)"}


def check(
    r: Reached, f: FileFacts, arch: ArchSpec, place: dict[str, str], reg: Registry | None = None
) -> Finding | None:
    d, target = r.decision, arch.facts
    if d.kind == "return" and reg is not None and callers.asked_elsewhere(d, f, reg):
        return None  # a predicate's definition: its callers hold the decisions
    if d.kind == "return" and pure(r, 0) and (reg is None or _arch_named(d)):
        return None  # `def is_hopper(): return major == 9`: its callers, named for it, are read
    if d.kind == "return" and _identity_predicate(r):
        return None  # `def is_sm100a_supported(): return major == 10 and ...`: says which GPU it is
    if (
        d.kind in {"chain", "guards"}
        and all(a.summary in _ANSWERS for a in d.arms)
        and (reg is None or callers.asked_elsewhere(d, f, reg))
    ):
        return None  # `if cap == (10, 3): return True; return False`: a predicate written with ifs
    if all(_SUFFIX.match(a.summary) for a in d.arms):
        return None  # `return "a" if major >= 9 else ""`: how each arch's build target is spelled
    if _WARNS.match(d.context.rsplit(".", 1)[-1]):
        return None  # `warn_if_flashinfer_kernels_missing()`: which GPUs are warned, no path
    if d.kind in {"return", "chain", "guards"} and all(_SENTENCE.match(a.summary) for a in d.arms):
        # `_unavailable_reason()`: every GPU is told why a path is off, in words; which path that is
        # and who gets it is decided where the path is turned on or off
        return None
    mine = r.reach[target.cc]
    if not mine:
        return None  # an earlier guard already turned the target away: judged there
    if all(d.arms[i].summary in _YES for i in mine):
        return None  # a predicate that says yes to the target: a sibling's narrower answer is its own limit
    if any(
        d.arms[i].action == "positive" and kernelmodules.names_target(d.arms[i].archs, target) for i in mine
    ):
        return None  # the target's path names it (`load_bsa_attn_sm120_blk64_fwd`): its own
    narrowed = _fails_where_others_never(r, mine, target)
    shared = narrowed != mine  # then a GPU that may fail as the target does is not one left out
    mine = narrowed
    # where the target is turned away (an error, a refusal), carrying on untouched is the good outcome
    refused = all(d.arms[i].action in {"error", "reject"} for i in mine)
    good = {"positive", "nothing"} if refused else {"positive"}
    missed = _left_out(r, mine, good, siblings(target), shared)
    if not missed and _refused_as_ampere_only(d, mine):
        # a feature that works on Ampere alone and raises on the target (DeepSpeed's WF6AF16 FP6
        # GEMM, "only supported on Ampere architectures") is one the target loses
        missed = _left_out(r, mine, good, [a for a in all_facts().values() if a.major == 8], shared)
    # a path a GPU of the target's own generation gets: no feature of the generation is missing
    kin = [cc for owners in missed.values() for cc in owners if facts_of(cc).major == target.major]
    mine_says = {d.arms[i].summary for i in mine}
    missed = {
        i: sibs
        for i, sibs in missed.items()
        if d.arms[i].summary not in mine_says
        # (an outcome the owners may take too is no path of the target's own: `if spec: ...
        # elif is_sm100: ...` inside `if is_blackwell:`, both may take the first arm)
        and all(_generic_for(r, j, sibs, target.cc) for j in mine if not _shared(r, j, sibs, target.cc))
        and not any(_answers_for_itself(d, j, sibs, target, f, reg) for j in mine)
        # a path only a sibling of the target's own family gets (a GB10-only tweak for 12.0) is
        # that product's tuning, not a path the target was left out of
        and any(facts_of(cc).major != target.major for cc in sibs)
        and not _fallback_pick(d.arms[i].summary)
        and not _given_elsewhere(r, i, target.cc)
        and not _flag_weighed_for_target(r, i, target)
        and not _REQUIREMENT.search(d.context.rsplit(".", 1)[-1])
        and not _legacy_path(r, i, mine)
        and not _sized_down_for_smaller(r, i, target)
    }
    # an answer, a reordering or sizes only another generation gets (a Hopper-measured shortcut, a
    # Thor-only tile cap), with all of 10.x left out as the target is: that generation's special
    # case, at most tuning (low); not where the target's outcome is an error (a table of answers
    # that raises for the rest)
    special = {
        i
        for i, sibs in missed.items()
        if (_tuning(d.arms[i].summary) or _sizes_only(d.arms[i].summary))
        and not any(
            d.arms[j].action == "error" or _unwrapped(d.arms[j].summary).startswith("raises") for j in mine
        )
        and _another_generations_case(r, sibs, mine, target, f, reg)
    }
    if special and len(special) < len(missed):  # another path is the one to name
        missed = {i: sibs for i, sibs in missed.items() if i not in special}
        special = set()
    if not missed:
        return None
    # `if cap in ((8, 9), (12, 0)): use_fused = False  # cuDNN bug`, every other GPU skipping it: a
    # limit the authors put on the target by name, not a path the others get
    skipped = all(d.arms[i].summary == "skips the branch" for i in missed)
    named_limit = next((j for j in mine if _written_for_target(d.arms[j], target)), None) if skipped else None
    fails = any(d.arms[i].action == "error" for i in mine)
    left_out_of = sorted({cc for sibs in missed.values() for cc in sibs})
    if not refused and _behind_refused_setting(d, target, left_out_of, reg):
        # only reached under a setting the target cannot have (not the check refusing it): judged there
        return None

    def said(i: int, whole: bool = False) -> tuple[list[tuple[str, ...]], list[str]]:
        """What arm i's code needs, on the target's way through it (`whole`: anywhere in it),
        then what the comments on the decision state."""
        needs, seen = _unported(d.arms[i].needs, d.arms[i].evidence, target, reg, d)
        if not whole:
            needs, seen = _on_the_target_s_way(r, i, needs, seen, target)
        return needs + d.needs, seen + [f"{w} in a comment" for w in d.needs_from]

    def lacking(i: int, whole: bool = False) -> list[tuple[str, ...]]:
        return [n for n in evidence.lacking(said(i, whole)[0], target) if someone_has(n, missed[i])]

    # a path the target could run is the gap to name; one it cannot run only explains the exclusion
    # (which path is named is chosen by what any part of it needs: a path of mnnvl for 10.x only is
    # no better a gap to name for that)
    arm_i = min(missed, key=lambda i: (bool(lacking(i, whole=True)), i))
    arm, sibs = d.arms[arm_i], missed[arm_i]
    lack = lacking(arm_i)
    said_mine = _summaries(d, mine)  # what the target's outcomes do, in order
    apart = _apart(r, mine, sibs)  # those of them no owner reaches
    told_apart = list(dict.fromkeys(said_mine))
    # an outcome that is a nested decision ("if x and y...") is judged there; say what else it gets
    instead = "; ".join([s for s in told_apart if not s.startswith("if ")] or told_apart) or "nothing"
    # the line that decides: the guard that turned the target away, else the test of the path it misses
    tested = [i for i in mine if d.arms[i].test is not None]
    # of a run of guard clauses, one that reads the arch (`if sparse_module is None: return` above
    # it turns every arch away alike)
    tested = [i for i in tested if r.names(i)] or tested
    decider = tested[0] if refused and tested else arm_i if arm.test is not None else max(tested, default=0)
    names = r.names(decider) or r.names(0)
    line = d.arms[decider].line if d.arms[decider].test is not None else d.line
    told = _deciding(r, decider, f, sibs, arch.cc, reg)
    if told is not None and names and told[0][:1] != names[:1]:
        # `... and not prefer_x and (is_sm90 or is_sm100)`: the operand that shuts the target out,
        # on its own line, where the test's first arch-dependent name (`prefer_x`) admits it
        names, line = told
    symbol = names[0] if names else d.source[:60]
    taken = arm.summary
    extra: dict[str, Any] = {
        "module": f.module,
        "context": d.context,
        "decision": d.kind,
        "admits": r.archs_reaching(arm_i),
        "needs": [evidence.describe(n) for n in arm.needs],
        "instead": instead,
        **place,
    }
    message = f"{symbol} leaves {arch.cc} out: {', '.join(sibs)} {taken}, {arch.cc} {instead}"
    module = _module_needs(f, r)  # what the module states, imports or is named for
    if not lack and refused:
        # the refusal's own words say why ("... whose tcgen05 MMA ..."), or, in a kernel module
        # that turns the target away, what the module imports or its docstring states
        told = _told(d, mine)
        needs, seen_in = told[0] + module[0], [f"{w} in the refusal" for w in told[1]] + module[1]
        lack = [n for n in evidence.lacking(needs, target) if someone_has(n, sibs)]
        seen = seen_in[needs.index(lack[0])] if lack else ""
    else:
        needs, seen_in = said(arm_i)
        seen = seen_in[needs.index(lack[0])] if lack else ""
    if not lack:
        # where the decision sits says what its paths are: a method of `FlashMLASparseBackend`,
        # `_is_fa3_supported()`, a module that imports tcgen05 or sits under `fmha_sm100/`
        needs, seen_in = _unported(*_around(d, f, module), target, reg, d)
        lack = [n for n in evidence.lacking(needs, target) if someone_has(n, sibs)]
        seen = seen_in[needs.index(lack[0])] if lack else ""
    portable = ""
    if not lack and reg is not None and arm.reaches:
        # what the modules the path calls into need: where its kernels live
        needs, seen_in, portable = reg.callees.needs(arm.reaches, arm.uses)
        needs, seen_in = _unported(needs, seen_in, target, reg, d)
        lack = [n for n in evidence.lacking(needs, target) if someone_has(n, sibs)]
        seen = seen_in[needs.index(lack[0])] if lack else ""
    asked = f.named_modules.get(d.context.partition(".")[0], ()) if arm.action == "positive" else ()
    if not lack and reg is not None and asked:
        # `return cap == (10, 3) and find_spec("flashinfer.jit.cake_blackwell_softmax") is not None`:
        # the modules the function loads by name to say yes are what its yes runs
        needs, seen_in, _ = reg.callees.needs(asked)
        lack = [n for n in evidence.lacking(needs, target) if someone_has(n, sibs)]
        seen = seen_in[needs.index(lack[0])] if lack else ""
    if not lack and reg is not None and arm.ops:
        # `return ops.kimi_k3_attn_res(...)`: the images of the tree's library that hold the op's
        # kernels (`attn_res_fwd_online_v2_kernel`: sm_100f alone) say what the path runs
        got = reg.op_kernels.needs(arm.ops)
        if got is not None:
            lack = [n for n in evidence.lacking([got[0]], target) if someone_has(n, sibs)]
            seen = got[1] if lack else ""
    if not lack and _loads_no_sm100_build(target, sibs):
        # a Jetson Thor has tcgen05, but runs no cubin built for the SM100 family (trtllm-gen,
        # `sm_100a` targets, DeepGEMM's kernels): it needs a build of its own
        words = said(arm_i)[1] + _around(d, f)[1]
        words += reg.callees.needs(arm.reaches, arm.uses)[1] if reg is not None and arm.reaches else []
        # (and the words of the refusal that turns it away: "TRTLLM MHA backend requires ...")
        words += [f"'{d.arms[i].stated}' in the refusal" for i in mine if refused and d.arms[i].stated]
        # (and what the owners' own arms call: `return trtllm_fmha_v2_prefill(...)`)
        words += [f"'{d.arms[i].summary}' on {', '.join(owners)}" for i, owners in missed.items()]
        built = next((w for w in words if _SM100_BUILD.search(w)), "")
        if built:
            lack, seen = [("sm100_build",)], built
    if not lack and (variant := _generation_variant(r, mine, sibs, target)):
        # `if is_sm90 and es: es_fp8_mm() elif es: es_sm100_mxfp8_mm() else: fp8_mm()`: the chain
        # gives each generation its kernel; the target is routed as datacenter Blackwell is
        lack = [("wgmma",)]
        seen = (
            f"the chain's path named for SM100 ({variant}), which every 10.x GPU takes as {arch.cc} "
            f"does: the {', '.join(sibs)} path is its Hopper counterpart"
        )
    if not lack and not kin and (per := _per_generation(r, mine, arm_i, target)) is not None:
        # `if cap == (9, 0): hopper_kernel() ... if cap in 10.x: sm100_kernel() ... raise "requires
        # Hopper SM90 or Blackwell SM100/SM103"`: each generation runs a kernel of its own
        lack, seen = [per[0]], per[1]
    theirs = [d.arms[i] for i in mine]
    if not lack and not kin and reg is not None:
        # a backend the path gives a setting by name (`"trtllm_mla"`): what the module registered
        # under that name runs (`trtllm_gen` in trtllm_mla_backend.py)
        got = reg.named.need(_given(arm, theirs), target, sibs)
        # a test reading a module's limits (`tp_size in SUPPORTED_TP_SIZES`) guards that module's path
        got = got or (reg.named.asked(d.asks, target, sibs) if d.asks else None)
        if got is not None:
            lack, seen = [got[0]], got[1]
    if not lack and not kin and not portable and not f.kernels and reg is not None:
        # `@supported_compute_capability([100, 103, 107])` in `prims_ts/gemm/api.py`, which loads
        # `kernel.py` beside it by file: every kernel module of its own directory needs tcgen05
        got = kernelmodules.package_need(f, reg, target, sibs)
        # `_is_cute_dsl_kda_prefill_eligible` turning the target away in the adapter whose run
        # function imports `kda_kernels/kda_chunked_bt16.py`: every kernel module it drives needs
        # tcgen05 (a refusal's: which variant a dispatcher's tuning picks says nothing of its kernels)
        got = got or (kernelmodules.driven_need(f, reg, target, sibs) if refused else None)
        if got is not None:
            lack, seen = [got[0]], got[1]
    checked = _checked(arm, theirs, arch.cc, sibs, reg) if not lack and reg is not None else None
    if not lack and checked is None:
        # `family(100) and supports_trtllm_attention(is_prefill=True)`: the engine's own query in the
        # same test answers no for the target, whatever the arch test says (judged where it is)
        checked = _refused_by_query(r, arm_i, target, sibs)
    if not lack and checked is None and reg is not None and d.context:
        # `flashinfer_kda_prefill_default` picks a path the engine refuses on the target where it runs
        # it: "FlashInfer KDA prefill requires SM100 or SM103"
        named = callees.name_words(d.context.rsplit(".", 1)[-1])
        checked = reg.validations.refused_alike(named, arch.cc, sibs, d)
    if not lack and not kin and checked is None and reg is not None and arm.settings:
        # `--fp8-gemm-backend=flashinfer_cutedsl ... requires an SM100/SM103 GPU`: the engine's check
        # of the very setting and value the path gives, deferring to a library's support query
        worded = reg.validations.worded(arm.settings, arch.cc)
        need, archs = _written_for_archs(f"'{worded.words}'", target) if worded is not None else (None, [])
        if worded is not None and need is not None and someone_has(need, sibs):
            lack = [need]
            quoted = short(worded.words, 100)
            seen = f"the engine's own check at {worded.where}, naming {', '.join(archs)}: '{quoted}'"
    # every arch that gets the path, siblings or older (`major in (8, 9)`: Ampere runs it too)
    reachers = [cc for cc, got in r.reach.items() if arm_i in got]
    if not lack and not kin and (checked is None or not checked.refused):
        # the words around it name the archs the path is written for ("for SM100 and SM103")
        for words, where in _prose(arm, d):
            need, named = namedarchs.need_of(words, target)
            # every arch that gets the path has what it is written with (Hopper beside SM100 says
            # the path is no tcgen05 kernel, whatever a sentence about SM100 says; an Ampere that
            # gets it says it is no wgmma one, whatever a docstring naming Hopper says)
            if need is not None and all(someone_has(need, [cc]) for cc in reachers):
                lack, seen = [need], f"'{short(words, 100)}' ({where}), naming {', '.join(named)}"
                break
    if not lack and not kin and (checked is None or not checked.refused):
        # what the function or class it sits in opens with ("Page sizes >= 128 only run on the
        # trtllm-gen dynamic kernel"), when every arch that gets the path has that
        for need, seen_in in zip(*_unported(d.opening, d.opening_from, target, reg, d), strict=True):
            if evidence.lacking([need], target) and all(someone_has(need, [cc]) for cc in reachers):
                lack, seen = [need], seen_in
                break
    # the kernel code read where the path runs: its own, or that of the kernel modules it drives
    # (or that of the modules the owners' path calls into, `from .hopper_bf16_gemv import ...`,
    # where its own code names no need: not beside `if not has_deep_gemm_sparse_mqa(): raise`)
    read = (
        f.kernels
        or (portable if not arm.needs else "")
        or (kernelmodules.driven_portable(f, reg, target) if refused and reg is not None else "")
    )
    if not lack and refused and not kin and not read:
        # `return False, "Machete requires compute capability of 90 (Hopper)"`, `raise
        # RuntimeError("requires SM100/SM103")`: the target is turned away in words naming the
        # archs the path is written for; what those archs all have and the target lacks is what
        # it is written with. Not when a GPU of the target's own generation gets the path, nor
        # when kernel code the module runs was read and needs nothing the target lacks.
        for i in mine:
            words = f"'{d.arms[i].stated}'" if d.arms[i].stated else d.arms[i].summary
            if _VALIDATED_ONLY.search(words):
                continue  # "currently verified only on Hopper": what was tried, not what it needs
            # (archs named with different MMA generations say a kernel per generation, none for the
            # target: not of a collective, whose code runs no MMA, nor of what was only validated there)
            either = ("multi_gpu",) not in evidence.needs_in(words.lower()) and not _only_validated(r, f)
            need, named = _written_for_archs(words, target, either)
            if need is not None and someone_has(need, sibs):
                said = f" ('{d.arms[i].stated}')" if d.arms[i].stated else ""
                lack, seen = [need], f"the refusal naming {', '.join(named)} as what it requires{said}"
                break
    if (
        not lack
        and not kin
        and checked is None
        and not _sizes_only(taken)
        and (family := _one_mma_family(r, mine, sibs, target))
    ):
        # `capability.major in (10, 11)`: the GPUs that get the path are exactly those with tcgen05,
        # over more than one generation: the authors chose by that instruction set (a size they get
        # is tuning, whoever gets it)
        lack = [(family,)]
        seen = f"the gate admitting exactly the GPUs with {family} ({', '.join(sibs)})"
    preference = "" if lack or checked is not None else _preference(arm, d, sibs, target)
    stale = ""  # words saying the target is unsupported that a port in the tree outdates
    if not preference and not lack and checked is None:
        # `if is_sm120(): logger.info("FA is not supported on SM12.x; falling back to SDPA")`
        preference, stale = _says_unsupported(r, mine, sibs, target, reg)
    if not preference and not lack and checked is None:
        # `if is_sm100: backend = get_default_attn_backend(...); if backend == ...: override`
        preference = fixups.default_fixup(taken, said_mine)
    if not preference and not lack and (checked is None or not checked.refused) and d.prior:
        # `fallback = get_fallback_backend()` then `if is_sm100: fallback = "fa4"`
        preference = fixups.prior_fixup(d.prior, taken, said_mine)
    if not preference and not lack and checked is None and reg is not None:
        # `if is_sm100 and cfg.attention_backend is None: return {"attention_backend": "flashinfer"}`
        # where the target's default (`get_default_attn_backend`) can be that already
        preference = fixups.default_gives(d, arm, said_mine, arch.cc, reg)
    # `if is_sm120(): target = SDPA elif is_blackwell(): set_fa_ver(4)` above, then `if target == FA
    # and is_blackwell(): set_fa_ver(4)`: the function already sent the target its own way
    routed = "" if preference or lack or checked is not None else _routed_apart(r, arm_i, sibs, target.cc)
    restricted = (
        _restricting_flag(r, arm_i, decider, f)
        if not preference and not lack and checked is None and not routed
        else ""
    )
    if taken.startswith(outcomes.RESHAPES):
        # `return lens.view(-1, 1).expand(-1, n).contiguous()`: a layout for a kernel picked elsewhere
        severity = "low"
        extra["evidence"] = "the branch only reshapes its inputs"
        consequence = (
            f"expected: {', '.join(sibs)} get their inputs laid out for a kernel chosen elsewhere, where "
            f"that choice is judged; {arch.cc} {instead}"
        )
    elif forwarded := _forwards_checked(arm):
        # `if is_sm100 and meta.lens_2d is not None: lens_2d = meta.lens_2d`: plumbing
        severity = "low"
        extra["evidence"] = f"the branch only hands on '{forwarded}', which its test requires to be set"
        consequence = (
            f"expected: {', '.join(sibs)} hand on '{forwarded}' where it is set; whether it is set for "
            f"{arch.cc} is decided, and judged, where it is assigned; {arch.cc} {instead}"
        )
    elif preference:
        # "cuDNN SDPA is 1.25-1.5x faster than FA4 on sm_100", "a workaround for SM100's dispatcher":
        # a choice made for the sibling, not a path the target could not have
        severity = "low"
        extra["tuning"] = True
        extra["evidence"] = preference
        consequence = f"a preference or workaround for {', '.join(sibs)} ({preference}); {arch.cc} {instead}"
        if preference.endswith("goes its own way"):
            consequence = f"not a loss: the code says so ({preference}); {arch.cc} {instead}"
        elif preference.endswith("already"):
            consequence = f"not a loss: {preference}; {arch.cc} {instead}"
    elif restricted:
        # `if uses_sm100_trtllm_nvfp4 and uses_draft_model: <pin the draft backend or raise>` beside
        # five `if uses_sm100_trtllm_nvfp4 and ...: raise`: what the owners' configuration must keep
        severity = "low"
        extra["evidence"] = restricted
        consequence = (
            f"expected: a restriction of {', '.join(sibs)}'s configuration ({restricted}): this branch "
            f"fits the settings to it; {arch.cc} {instead}"
        )
    elif checked is not None and checked.refused:
        whose = f"the {checked.whose}'s own check at {checked.where}"
        extra["evidence"] = f"{whose}, which {checked.words} on {arch.cc}"
        severity = "low"
        consequence = (
            f"expected: {arch.cc} is refused this path by the engine itself ({extra['evidence']}); "
            f"{arch.cc} {instead}"
        )
    elif routed:
        severity = "low"
        extra["evidence"] = routed
        consequence = (
            f"expected: the same function already keeps {arch.cc} from this path by an arm written for "
            f"it ({routed}); {arch.cc} {instead}"
        )
    elif lack:
        need = evidence.describe(lack[0])
        extra["evidence"] = seen
        severity = "low"
        consequence = (
            f"expected: that path needs {need} (read from {extra['evidence']}), which {arch.cc} lacks; "
            f"{arch.cc} {instead}"
        )
    elif written := newer.written_for_newer(left_out_of, target, open_ended(r, arm_i)):
        # `is_sm120` read on a B200, `family(100)` on an L40S: the path of later GPUs, not a floor
        severity = "low"
        extra["evidence"] = written
        consequence = f"expected: a path {written}; {arch.cc} {instead}"
    elif (carved := _carved(r, decider, f, arch.cc, reg, fails)) is not None:
        # `has_device_capability(90) and not family(120)`: the authors name the target's family to
        # keep it out, where every other GPU since Hopper gets through
        severity = "low"
        extra["evidence"] = f"the test '{short(carved[0], 80)}' (line {carved[1]})"
        consequence = (
            f"expected: the test names {arch.cc}'s family to shut it out ({extra['evidence']}), "
            f"where every other GPU since Hopper gets through: a deliberate exclusion; {arch.cc} {instead}"
        )
    elif not stale and (  # (words saying the target's own answer is a workaround a port outdated)
        own := (
            (
                choices.own_choice(taken, said_mine, arm.values, [d.arms[i].values for i in mine])
                if checked is None
                else ""
            )
            # a default resolver's own named answer for the target stands beside the sibling's, whether
            # or not the engine would also accept the sibling's there
            or _resolver_own(d, taken, apart or mine)
            # `elif is_sm100: overrides["attention_backend"] = "trtllm_mha"` under `if
            # is_attention_backend_not_set(cfg)`: the target keeps its default resolver's own answer
            or (
                fixups.default_own(d, arm, _summaries(d, apart or mine), arch.cc, reg)
                if reg is not None and (checked is None or not checked.refused)
                else ""
            )
        )
    ):
        # `"cute-dsl" if is_sm100 else "cuda"`: the target is handed a named implementation of its own
        severity = "low"
        extra["tuning"] = True
        # (a summary that says first what else the arm does: the value its code gives)
        theirs_words = (
            f"{'get' if len(sibs) > 1 else 'gets'} '{arm.values[0]}'"
            if choices.unpicked(taken) and len(arm.values) == 1
            else taken
        )
        consequence = (
            f"a choice between implementations: {', '.join(sibs)} {theirs_words}, {arch.cc} gets '{own}' "
            f"of its own; worth measuring on {arch.cc}"
        )
    elif warm := _warm_up(d, f):
        # `if is_device_capability_family(100): mixed_batch_attention_warmup()`: what the target
        # runs is decided where the path is chosen (judged there); a warm-up only readies it
        severity = "low"
        extra["evidence"] = warm
        consequence = (
            f"a warm-up ({warm}) of a path chosen elsewhere: whether {arch.cc} loses the path is "
            f"judged where it is chosen; {arch.cc} {instead}"
        )
    elif all(d.arms[i].action == "error" for i in mine):
        # an unexplained crash is high; a refusal that says what it needs is a clear, medium loss
        explained = all("'" in d.arms[i].summary for i in mine)
        chosen = _chosen_setting(d)  # `if backend.is_cutlass(): assert ...`: only when asked for
        severity = "medium" if explained or chosen else "high"
        consequence = f"on {arch.cc} this {instead}, where {', '.join(sibs)} {taken}"
        if chosen:
            consequence += f"; only when {chosen} is asked for, not by default"
        if read:
            extra["evidence"] = read
            consequence += (
                f"; the kernels read ({read}) use no tcgen05, wgmma or multicast: the path looks portable"
            )
    elif (
        (
            _value(taken)
            and all(
                _value(d.arms[i].summary)
                or _default(d.arms[i].summary)
                or _same_shape(taken, d.arms[i].summary)
                for i in mine
            )
        )
        or _tunes_a_library(taken)
        or _padded(arm, [d.arms[i] for i in mine])
        or _computed_numbers(taken, said_mine)
        or _tuned_tables(taken, said_mine, d.context)
        # `if Lq <= 256: BLOCK_M, BLOCK_N = (64, 64) else: ...` beside `BLOCK_M, BLOCK_N = (64, 64)
        # if Lq <= 128 else (32, 32)`: tiles each arch sizes its own way, nested or not
        or (taken.startswith("if ") and _sizes_only(taken) and all(_sizes_only(s) for s in said_mine))
        or _numbers_apart(taken, said_mine)
    ):
        # `16 if is_sm103 else 8`, `return (32, 1)` / `return (8, 4)`: each arch gets a number of its own
        severity = "low"
        extra["tuning"] = True
        consequence = (
            f"tuning only: {', '.join(sibs)} {taken}, {arch.cc} {instead}; "
            f"worth measuring on {arch.cc} where this path is hot"
        )
    elif _numerics_flags_only(taken, said_mine):
        # `return ["--use_fast_math"]` on 9.0, `return []` on 10.x and 12.0: how exactly the same
        # kernel rounds (fast or precise math), a numerics policy, not a path
        severity = "low"
        extra["tuning"] = True
        consequence = (
            f"a numerics choice, not a path: {', '.join(sibs)} {taken}, {arch.cc} {instead} "
            f"(the same kernels, compiled with other rounding flags)"
        )
    elif asked := _LIBRARY_QUERY.search(taken):
        # `if cap < 90 or cap >= 110: return False; return torch.ops._C.cutlass_group_gemm_supported(cap)`:
        # the others ask the compiled library what it was built with; the authors keep the target
        # from even asking, so the library holds nothing for it
        severity = "low"
        extra["evidence"] = f"the others' answer is the compiled library's own query {asked[0]}...)"
        consequence = (
            f"expected: {', '.join(sibs)} ask the compiled library ({asked[0]}...)), which the test keeps "
            f"{arch.cc} from asking: what the library was built for is decided where it is built; "
            f"{arch.cc} {instead}"
        )
    elif tuning_said := _said_tuning(d, sibs):
        # "Check if running on Blackwell (SM100+) for kernel tuning": launch numbers one generation
        # was measured with; the target keeps the defaults the other generations keep
        severity = "low"
        extra["tuning"] = True
        extra["evidence"] = tuning_said
        consequence = (
            f"tuning for one generation ({tuning_said}): {', '.join(sibs)} {taken}, {arch.cc} {instead}; "
            f"worth measuring on {arch.cc} where this path is hot"
        )
    elif pins := _model_shape(d):
        # `hidden_size == 5120 and num_experts == 256 and major in (9, 10)`: a path turned on for one
        # model's shape on the GPUs it was measured on, a model-specific loss (medium on the issue's
        # scale: low is for a path that needs what the target lacks)
        severity = "medium"
        extra["tuning"] = True
        consequence = (
            f"tuned for one model's shape ({pins}): {', '.join(sibs)} {taken}, {arch.cc} {instead}; "
            f"worth measuring on {arch.cc} for that model"
        )
    elif named_limit is not None:
        severity = "low"
        extra["evidence"] = f"the test '{short(d.arms[named_limit].source or d.source, 80)}' names {arch.cc}"
        consequence = (
            f"a limit put on {arch.cc} by name ({extra['evidence']}), every other GPU skipping it: "
            f"a known issue of the authors', not a path others get; {arch.cc} {instead}"
        )
    elif lacked := _path_of_those_without(r, arm_i, target):
        # `use_fmha_v2 = is_sm90 or is_sm120` read on a B300: the GPUs let in lie on both sides of
        # the target and share only the lack of what it has: their way around that lack
        severity = "low"
        takers = r.archs_reaching(arm_i)
        many = f"{len(takers)} GPUs from {takers[0]} to {takers[-1]}"
        named = ", ".join(takers) if len(takers) <= 6 else many
        extra["evidence"] = f"{named} all lack {lacked}, which {arch.cc} has"
        consequence = (
            f"expected: the path of GPUs without {lacked} (older and newer ones alike: {extra['evidence']}); "
            f"{arch.cc} {instead}"
        )
    else:
        severity = "medium"
        consequence = f"{arch.cc} never gets this path ({taken}); it {instead} instead"
        if portable:
            extra["evidence"] = portable
            consequence += f"; the kernels it runs ({portable}) need nothing {arch.cc} lacks"
        elif checked is not None:
            extra["evidence"] = f"the engine's own check at {checked.where} lets {arch.cc} through"
            consequence += f"; the engine itself accepts it on {arch.cc} ({checked.where})"
        demanded = reg.demands.of_default(d, arm, arch.cc) if reg is not None else ""
        if demanded:
            # `is_sm100 and backend is None: backend = "triton"`, where `if is_blackwell(): assert
            # backend == "triton" ...` holds on the target too: its default fails the engine's check
            severity = "high"
            extra["evidence"] = demanded
            consequence += (
                f"; the engine's own check at {demanded} on {arch.cc} as well: left to the general "
                f"default, {arch.cc} fails it when nothing is asked for"
            )
        elif (default := _default_fallback(d, taken, mine, apart)) is not None:
            # `if self.attention_backend is None: ... else: self.attention_backend = "triton"`: what
            # 12.0 runs with when nothing is asked for, the sibling's own backend left out
            severity = "high"
            consequence += f"; this is the default ({default}): {arch.cc} runs the fallback by default"
    generation_rule = (
        severity == "medium"
        and not read  # a module whose kernels were read and need nothing: a portable path
        and all(d.arms[i].action == "reject" for i in mine)
        and all(_another_generations_case(r, owners, mine, target, f, reg) for owners in missed.values())
    )
    validated = _only_validated(r, f) if generation_rule else ""
    if generation_rule and not validated:
        # a restriction (asserts on the configuration, a refusal returned) all of datacenter
        # Blackwell shares with the target, which only older GPUs escape: the generation's rule
        severity = "low"
        consequence += f"; every 10.x GPU is restricted as {arch.cc} is"
    elif validated:
        consequence += f"; what it lets in is what was validated, not all that can run it ({validated})"
    if severity != "low" and not _asks_device(d, f, reg):
        # `if effective_sm == 90:` in a kernel generator: the arch of the spec it is given, which may
        # never be the GPU's (a 12.0 spec with sm_mma=80 takes the HMMA arm)
        severity = "low"
        consequence += f"; {f.module} never asks the GPU it runs on: the arch it tests is given to it"
    partner = _partner_admits(d, f, reg, _blackwell(), arch.cc) if severity != "low" else ""
    if partner and all(facts_of(cc).major < 10 for cc in sibs):
        consequence += (
            f"; the module or-s {callers.helper_name(d)}() with {partner}(), which says yes to 10.x: "
            f"{arch.cc} alone goes without the caller's yes"
        )
    told = _said_without(d, mine, target) if severity == "medium" else ""
    numeric = _thresholds_only(taken)
    family = _family_branch(r, sibs, target) if severity == "medium" and not told and numeric else ""
    if family:
        # `if is_hbm: ... return M <= 512` above `if is_sm120: ...` in a per-arch heuristic: the
        # authors gave the target a branch of its own, so what they withhold here is their choice
        severity = "low"
        extra["evidence"] = f"a branch of the same function written for {target.cc}'s family ({family})"
        consequence += f"; the function gives {target.cc}'s family a branch of its own ({family})"
    if told:
        # "Architectures with only fa2 (e.g. SM89, SM120) cannot consume FP8 queries, so keep the
        # model dtype for Q there": the authors name the target and what it goes without
        severity = "low"
        extra["evidence"] = f"the comment beside it: '{short(told, 160)}'"
        consequence += f"; left out on purpose, the comment beside it says: '{short(told, 160)}'"
    if special and severity != "low":
        severity = "low"
        extra["tuning"] = True
        consequence += (
            f"; only {_generation_words(sibs)} get it, every 10.x GPU goes without it as {arch.cc} "
            f"does: a special case of theirs, worth measuring on {arch.cc}"
        )
    if severity != "low" and reg is not None and (first := refusedfirst.refused_before(d, f, reg, target)):
        # `arch == 90` in cuDNN's flex-attention dispatch, whose `get_device_arch()` raises for 12.0
        severity = "low"
        extra["evidence"] = first
        consequence += (
            f"; never reached on {arch.cc}: the module turns it away where it reads the GPU ({first})"
        )
    if severity != "low" and reg is not None and (upstream := reg.importers.refusal(f, target)):
        # HSTU's `_interface.py`, imported only by `api.py`, which raises for any major but 10
        severity = "low"
        extra["evidence"] = upstream
        consequence += f"; never reached on {arch.cc}: {upstream}"
    if stale and severity != "low":
        extra["evidence"] = stale
        consequence += f"; the branch says {arch.cc} is unsupported: {stale}"
    if place.get("where", "runtime") != "runtime":
        severity = "low"  # tests, benchmarks, examples, backward passes: not what a server runs
    return Finding(
        rule=RULE_ID,
        severity=severity,
        path=f.path,
        line=line,
        symbol=symbol,
        present=tuple(sibs),
        missing=arch.cc,
        consequence=consequence,
        message=message,
        arch=arch.cc,
        source=d.arms[decider].source if line != d.line and d.arms[decider].source else d.source,
        extra=extra,
        basis=decision_text(d, decider),
    )


_NUMBER = r"-?\d[\d_.]*(?:e-?\d+)?"
_VALUE = re.compile(
    rf"^(?:carries on \()?(?:gives|returns|sets [\w.]+ =) (?:{_NUMBER}|\((?:{_NUMBER}, )+{_NUMBER}\))\)?$"
)


# `calls update_opt_flags_constraints()`, `calls set_tuning_config()`: an arm that only hands a
# library its per-arch knobs
_KNOBS = re.compile(
    r"^(?:carries on \()?(?:calls \w*(?:constraint|opt_flag|tuning|tune_|autotune)\w*\(\)(?:, |\)?$))+$"
)


# The dimensions of a model a test may pin (`config.hidden_size == 5120`, `self.hc_count == 4`)
_SHAPE_NAME = re.compile(
    r"hidden|intermediate|experts|topk|top_k|heads|head_dim|hc_count|vocab|lora_rank", re.I
)
_MIN_PINS = 2  # one pinned size is as often a kernel's own constraint (`head_dim == 128`)


# a compiled op's own support query handed the capability (`torch.ops._C.cutlass_group_gemm_supported(cap)`)
_LIBRARY_QUERY = re.compile(r"\btorch\.ops\.\w+\.\w*support\w*\(")
_WARNS = re.compile(r"_*(?:maybe_)?warn(?:_|$)", re.I)  # a function there to warn
# An outcome that is an arch-specific target's suffix (`sm_90a`, `sm_120f`) or none: no path, only
# the spelling of what the arch's code is compiled for (sglang's `_cuda_arch_suffix`)
_SUFFIX = re.compile(r"""^(?:carries on \()?(?:returns|gives) (['"])[af]?\1\)?$""")
# a returned sentence (`return f"GPU SM {major}.{minor} < 9.0 (requires Hopper or newer)"`), not a name
_SENTENCE = re.compile(r"""^(?:carries on \()?returns f?(['"])[^'"]*\s[^'"]*(?:\1|\.\.\.)\)?$""")
# what a branch naming the target does for it: something, nothing, or turning something off (`if cap
# in ((8, 9), (12, 0)): use_fused = False  # cuDNN bug`), not an error
_WRITTEN_FOR = frozenset({"positive", "nothing", "reject"})
_FAILS = re.compile(r"\bassert\b|\braises?\b|fails the assert")


def _written_for_target(arm: Arm, target: ArchFacts) -> bool:
    """Is the arm one the target takes by a test naming it (`cap in ((8, 9), (12, 0))`), that
    fails nothing there (`assert num_splits == 1, 'SM120 forward ...'` is a refusal, judged as one)?"""
    return (
        arm.action in _WRITTEN_FOR and not _FAILS.search(arm.summary) and names_generation(arm.test, target)
    )


_GENERATION_FEATURES = ("tcgen05", "wgmma")  # what a generation's own kernels are written with


def _path_of_those_without(r: Reached, arm: int, target: ArchFacts) -> str:
    """The generation feature the target has and no arch taking `arm` has, when those archs lie
    both below and above the target (no age cutoff, a choice by what they lack); "" if none."""
    admitted = [facts_of(cc) for cc in r.archs_reaching(arm) if cc != target.cc]
    mine = (target.major, target.minor)
    if not any((a.major, a.minor) < mine for a in admitted):
        return ""
    if not any((a.major, a.minor) > mine and a.major != target.major for a in admitted):
        return ""
    return next(
        (
            evidence.describe((feat,))
            for feat in _GENERATION_FEATURES
            if target.has(feat) and not any(a.has(feat) for a in admitted)
        ),
        "",
    )


def _model_shape(d: Decision) -> str:
    """The model dimensions the decision's tests pin to literal sizes (`hidden_size == 5120`,
    `intermediate_size in (384, 768)`), when there are at least _MIN_PINS ("" otherwise)."""
    pins: list[str] = []
    for arm in d.arms:
        for node in ast.walk(arm.test) if arm.test is not None else ():
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and _pinned(node):
                text = ast.unparse(node)
                if text not in pins:
                    pins.append(text)
    return ", ".join(pins) if len(pins) >= _MIN_PINS else ""


def _pinned(node: ast.Compare) -> bool:
    """`config.hidden_size == 5120` / `self.num_experts in (128, 256)`: a dimension of the model's
    own (an attribute: a function's `hidden_size` argument may be a kernel's supported geometry)
    equal to literal sizes."""
    left, op, right = node.left, node.ops[0], node.comparators[0]
    if not isinstance(left, ast.Attribute) or not _SHAPE_NAME.search(left.attr):
        return False
    values = (
        right.elts
        if isinstance(op, ast.In) and isinstance(right, ast.Tuple)
        else [right]
        if isinstance(op, ast.Eq)
        else []
    )
    return bool(values) and all(
        isinstance(v, ast.Constant) and type(v.value) is int and v.value > 1 for v in values
    )


def _padded(arm: Arm, theirs: list[Arm]) -> bool:
    """Do the sibling's path and the target's only size with the same rounding functions
    (`round_up(n, 256)` beside `round_up(n, 32)`), or the target keeps the size as it is: a padding
    each arch's kernel wants, no path left out."""
    if not arm.sizes:
        return False
    sized = [a for a in theirs if a.sizes]
    return bool(sized) and all(a.sizes == arm.sizes or (not a.sizes and _default(a.summary)) for a in theirs)


def _computed_numbers(taken: str, mine: list[str]) -> bool:
    """Do the sibling and the target each get a number, one of them computed (`min(max_m,
    _SEVEN_CTA_MAX_M)` beside `0`, `(ROWS + n - 1) // n` beside `_DEFAULT_MIN_BATCH`): a threshold
    or size each arch sets its own way."""
    theirs = _number_expr(taken)
    if theirs is None or not mine:
        return False
    ours = [e for e in (_number_expr(summary) for summary in mine) if e is not None]
    # beside a number of the target's, a variable it also returns (`return need`) holds one too
    named = [s for s in mine if _BARE_NAME.match(_unwrapped(s))]
    return bool(ours) and len(ours) + len(named) == len(mine) and any(_computed(e) for e in [theirs, *ours])


_BARE_NAME = re.compile(r"^(?:gives|returns) [a-z_][a-z0-9_]*$")


# Calls that keep a number a number
_NUMBER_CALLS = frozenset(
    {"min", "max", "int", "round", "ceil", "floor", "cdiv", "ceil_div", "round_up", "next_power_of_2"}
)


def _tuned_tables(taken: str, mine: list[str], context: str) -> bool:
    """Does the sibling get tables of tuned values (`return (_SM100F_TUNED_DOTPROD_BS, ...)` in
    `_arch_tuned_configs`: the names say so) where the target gets empty ones or none: the
    kernel's defaults, the same path untuned?"""
    theirs = _outcome_expr(taken)
    if theirs is None or not mine:
        return False
    names = list(theirs.elts) if isinstance(theirs, ast.Tuple) else [theirs]
    if not all(isinstance(e, ast.Name) and _CONSTANT.match(e.id) for e in names):
        return False
    said = " ".join([context.rsplit(".", 1)[-1], *(e.id for e in names if isinstance(e, ast.Name))])
    if not _TUNED.search(said):
        return False
    for summary in mine:
        ours = _outcome_expr(summary)
        parts = ours.elts if isinstance(ours, ast.Tuple) else [ours]
        if ours is None or not all(_empty(p) for p in parts):
            return False
    return True


_TUNED = re.compile(r"tuned|tuning", re.I)


def _outcome_expr(summary: str) -> ast.expr | None:
    what = _OUTCOME.match(_unwrapped(summary))
    if what is None or "..." in what[1]:
        return None
    try:
        return ast.parse(what[1], mode="eval").body
    except SyntaxError:
        return None


def _empty(node: ast.expr | None) -> bool:
    """`{}`, `[]`, `()`, `None`: nothing of the target's own."""
    if isinstance(node, ast.Constant):
        return node.value is None
    return isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and not getattr(
        node, "elts", getattr(node, "keys", None)
    )


_WARM = re.compile(r"warm_?up|pre_?compile|pre_?warm", re.I)


def _warm_up(d: Decision, f: FileFacts) -> str:
    """The function or module, named a warm-up or a precompile, the decision sits in ("" if none)."""
    for name in (d.context, f.module.rsplit(".", 1)[-1]):
        if name and _WARM.search(name):
            return f"'{name}'"
    return ""


# nvcc / host-compiler flags that only change how arithmetic rounds (fast math, flush to zero,
# approximate division and square root, fused multiply-add): a precision policy
_NUMERICS_FLAG = re.compile(
    r"^-{1,2}(?:use_fast_math|ffast-math|ftz(?:=\w+)?|prec-(?:div|sqrt)(?:=\w+)?|fmad(?:=\w+)?"
    r"|D_?_?(?:USE_)?FAST_MATH\w*)$"
)


def _numerics_flags_only(taken: str, mine: list[str]) -> bool:
    """Does the sibling get only compiler flags of rounding (`returns ['--use_fast_math']`), where
    the target gets none or other such flags (`returns []`)? The kernels are the same."""

    def flags(summary: str) -> list[str] | None:
        expr = _outcome_expr(summary)
        if not isinstance(expr, (ast.List, ast.Tuple)):
            return None
        out = [e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out if len(out) == len(expr.elts) else None

    theirs = flags(taken)
    if not theirs or not all(_NUMERICS_FLAG.match(x) for x in theirs):
        return False
    return bool(mine) and all(
        (got := flags(summary)) is not None and all(_NUMERICS_FLAG.match(x) for x in got) for summary in mine
    )


def _number_expr(summary: str) -> ast.expr | None:
    """The expression an outcome gives or returns when it can only be a number: literals, names of
    constants (`_DEFAULT_MIN_CUTLASS_BATCH_SIZE`), arithmetic and `min` / `max` of them (None
    otherwise, or when the summary cuts it short)."""
    expr = _outcome_expr(summary)
    if expr is None:
        return None
    for node in ast.walk(expr):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                return None
        elif isinstance(node, ast.Name):
            # a bare name is a number only when it is a constant's; one inside arithmetic is an operand
            if node is expr and not _CONSTANT.match(node.id):
                return None
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else ""
            if name.split(".")[-1] not in _NUMBER_CALLS or node.keywords:
                return None
        elif isinstance(node, ast.Attribute):
            if node is expr:
                return None  # `self.padded_heads`: which value, not a number computed
        elif not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load)):
            return None
    return expr


_CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")


def _computed(expr: ast.expr) -> bool:
    return isinstance(expr, (ast.BinOp, ast.Call)) or (
        isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant)
    )


def _tunes_a_library(summary: str) -> bool:
    return bool(_KNOBS.match(summary))


# What keeps the defaults where a sibling gets numbers of its own: the tuned branch skipped, or
# `return (None, None)` (let the kernel pick)
_DEFAULTS = re.compile(r"^(?:skips the branch|(?:carries on \()?(?:gives|returns) \((?:None, )+None\)\)?)$")


def _default(summary: str) -> bool:
    return bool(_DEFAULTS.match(summary))


def _value(summary: str) -> bool:
    """Does the outcome only give a number (or a tuple of them, or one of two such by a condition:
    `(2, 2) if self._block_scaled else (4, 4)`): a tuning value?"""
    if _VALUE.match(_unwrapped(summary)):
        return True
    what = _OUTCOME.match(_unwrapped(summary))
    if what is None or " if " not in what[1]:
        return False
    body, _, rest = what[1].partition(" if ")
    other = rest.rpartition(" else ")[2]
    return all(_NUMBERS.match(part.strip()) for part in (body, other))


_OUTCOME = re.compile(r"^(?:gives|returns|sets [\w.]+ =) (.*)$")


def _unwrapped(summary: str) -> str:
    """`carries on (returns x)` -> `returns x`; `hands bw to f(), which returns x` -> `returns x`."""
    if summary.startswith("carries on (") and summary.endswith(")"):
        return summary[len("carries on (") : -1]
    handed = _HANDED.match(summary)
    return summary[handed.end() :] if handed is not None else summary


_HANDED = re.compile(r"hands [\w.]+ to \w+\(\), which ")


_NUMBERS = re.compile(rf"^(?:{_NUMBER}|\((?:{_NUMBER}, )+{_NUMBER}\))$")


def _same_shape(taken: str, summary: str) -> bool:
    """Does the target get a tuple of as many values as the sibling's numbers (`(min(next_pow2(v),
    32), 1)` beside `(4, 1)`): the same knobs, set another way?"""
    mine, theirs = _OUTCOME.match(_unwrapped(summary)), _OUTCOME.match(_unwrapped(taken))
    if mine is None or theirs is None or not theirs[1].startswith("("):
        return False
    try:
        a, b = ast.parse(mine[1], mode="eval").body, ast.parse(theirs[1], mode="eval").body
    except SyntaxError:
        return False
    return isinstance(a, ast.Tuple) and isinstance(b, ast.Tuple) and len(a.elts) == len(b.elts)


def _numbers_apart(taken: str, mine: list[str]) -> bool:
    """Does the target get the sibling's very expression but for some of its numbers (`(64, 1,
    _tile(d, 32))` beside `(16, 1, _tile(d, 64))`): the same knobs, sized its own way? Numbers
    that may be arch numbers (`load(90)` beside `load(80)`) do not count as sizes."""
    theirs = _OUTCOME.match(_unwrapped(taken))
    if theirs is None or not mine:
        return False
    for summary in mine:
        ours = _OUTCOME.match(_unwrapped(summary))
        if ours is None or "..." in ours[1] + theirs[1] or ours[1] == theirs[1]:
            return False
        try:
            a, b = ast.parse(ours[1], mode="eval").body, ast.parse(theirs[1], mode="eval").body
        except SyntaxError:
            return False
        numbers_a, numbers_b = _blank_numbers(a), _blank_numbers(b)
        if ast.dump(a) != ast.dump(b) or any(
            x != y and _arch_numbers(x, y) for x, y in zip(numbers_a, numbers_b, strict=True)
        ):
            return False
    return True


def _blank_numbers(node: ast.expr) -> list[int | float]:
    """The numbers of an expression, each set to 0 in place (so that two expressions compare
    apart from them)."""
    found: list[int | float] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and type(sub.value) in (int, float):
            found.append(sub.value)
            sub.value = 0
    return found


def _arch_numbers(x: int | float, y: int | float) -> bool:
    """Could two numbers that differ be arch numbers (`90` / `100`, majors `9` / `10`)?"""
    known = {a.number for a in all_facts().values()}
    majors = {a.major for a in all_facts().values()}
    return x in known or y in known or (x in majors and y in majors)


def _told(d: Decision, mine: tuple[int, ...]) -> tuple[list[tuple[str, ...]], list[str]]:
    """What the target's refusals say they need, in instruction-level words: read in the whole
    message (the arm's code), not in its summary, which cuts it short."""
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    for i in mine:
        arm = d.arms[i]
        for need, seen in zip(arm.needs, arm.evidence, strict=True):
            word = seen.split(" (line")[0]
            # ("... require NVLink Blackwell GPUs": a refusal that names the link it needs)
            named = remarks.stated(word)[0] or _FAMILY_WORD.search(word) or need in _NAMED_BY_ITS_WORD
            if need not in needs and named:
                needs.append(need)
                where.append(seen)
    return needs, where


_NVLINK = ("nvlink",)
# needs whose every spelling is the instruction itself (`cvt.rs`, `redux.sync...f32`, `f32x2`) or
# the link: where a refusal spells one, it says why
_NAMED_BY_ITS_WORD = frozenset({_NVLINK, ("cvt_rs",), ("redux_f32",), ("ptx_sm100",)})
# A kernel family a refusal names (`--fp8-gemm-backend=flashinfer_trtllm`): what its kernels need
_FAMILY_WORD = re.compile(r"trtllm|deep_?gemm|flash_?mla|cutlass_mla|flash_?attn_?v?3|\bfa3\b")


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


_FABRIC = frozenset({("nvls_multicast",), ("nvswitch",), ("nvlink",)})


def _module_needs(f: FileFacts, r: Reached) -> tuple[list[tuple[str, ...]], list[str]]:
    """What the module imports, states or is named for, but what a comment elsewhere in it states
    where the decision's own words say it admits only what was tested ("TODO: other compute
    capabilities may be supported but are untested" above `@supported_compute_capability([90,
    100, 103, 107])`, in a module whose tinygemm2 section, 800 lines on, speaks of tcgen05): the
    authors say at the gate that the others may run it."""
    # (a sibling's, handed on, is told with ", via <module>" after it)
    if not any(remarks.FAR_COMMENT in w for w in f.needs_from) or not _only_validated(r, f):
        return f.needs, f.needs_from
    kept = [(n, w) for n, w in zip(f.needs, f.needs_from, strict=True) if remarks.FAR_COMMENT not in w]
    return [n for n, _ in kept], [w for _, w in kept]


def _around(
    d: Decision, f: FileFacts, module: tuple[list[tuple[str, ...]], list[str]] | None = None
) -> tuple[list[tuple[str, ...]], list[str]]:
    """What the code around a decision evidently needs: the names of the functions and classes it
    sits in (a kernel family's name: `FlashMLASparseBackend`, `_is_fa3_supported`), then what the
    module itself imports, states or is named for (`module`: those, where the caller has read them)."""
    needs: list[tuple[str, ...]] = []
    where: list[str] = []
    for part in reversed(d.context.split(".") if d.context else []):
        # (`_tinygemm2_sm100_enabled`, `is_sm90_supported`: an arch number in a name says which arch)
        snake = keyed.ARCH_NUMBER.sub("", _CAMEL.sub("_", part).lower())
        for need in evidence.needs_in(snake):
            if need not in needs:
                needs.append(need)
                where.append(f"the name {part}")
    for need, seen_in in zip(*(module or (f.needs, f.needs_from)), strict=True):
        if need not in needs:
            needs.append(need)
            where.append(seen_in)
    fabric = f.spelled[0] if len(f.spelled) == 1 and f.spelled[0] in _FABRIC else None
    if d.source.startswith("@") and fabric is not None and fabric not in needs:
        # `@supported_compute_capability([90, 100])` on an entry point of a module whose code
        # spells one fabric (`cuMulticastCreate` in its handler): the module is the path it gates
        # (an instruction set spelled there may be another function's: `from .x import _sm100_module`)
        needs.append(fabric)
        where.append(f"{f.spelled_from[0]} in the module's code")
    # "The TMA kernel needs SM100+ except SM12x (tcgen05, cp.async.bulk)": the docstring of the
    # function it sits in, in instruction-level words
    for sentence, place in _sentences_around(d):
        for need, word in zip(*remarks.stated(sentence), strict=True):
            if need not in needs:
                needs.append(need)
                said = place.split(" (line")[0]
                # ("the words opening _is_sm10x" already says whose words they are)
                where.append(
                    f"{word} in {said}" if said.startswith("the words ") else f"{word} in the words of {said}"
                )
    return needs, where


def _written_for_archs(
    words: str, target: ArchFacts, either: bool = False
) -> tuple[tuple[str, ...] | None, list[str]]:
    """The need a refusal's words imply: the tensor-core MMA generation every arch it names as
    required has and the target lacks (None when it names the target's own arch or family, or
    nothing, or archs without one in common; `either`: or, where each has one and the target none,
    any of them; where the words name a library built per family, also that build for the SM100
    family, which a tcgen05 GPU of another lacks)."""
    quoted = re.findall(r"'([^']*)'", words)
    if not quoted:
        return None, []
    if any(_OPEN_ENDED.search(q) for q in quoted):
        return None, []  # "requires Blackwell GPUs (SM100+)": an arch and all newer, the target's too
    built = _LIBRARY_BUILD.search(words) is not None
    return namedarchs.need_of(" ".join(quoted), target, either=either, built=built)


def someone_has(need: tuple[str, ...], ccs: list[str]) -> bool:
    """Does one of the archs `ccs` (the owners of a path) have the need?"""
    facts = all_facts()
    return evidence.had_by(need, (facts[cc] for cc in ccs))
