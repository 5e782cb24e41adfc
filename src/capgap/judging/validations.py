"""What the engine itself says about a setting on each arch: its own validation of a string.

Engines pick backends by name (`attention_backend = "trtllm_mha"` on SM100) and check the names
they are given elsewhere (`if backend == "trtllm_mha" and not (is_sm90 or is_sm100 or is_sm120):
raise ValueError(...)`). A path a sibling gets by name is judged by that check: when the engine
refuses the name on the target, leaving the target out of it is consistent (expected); when the
engine lets the target have it while it turns other archs away, the target could have been given
it (the gap stands, with that check as evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capgap.judging.reach import Reached, reached

if TYPE_CHECKING:
    from capgap.judging.records import Decision, FileFacts
    from capgap.judging.registry import Registry


@dataclass(frozen=True)
class Verdict:
    refused: bool  # True: the engine turns the target away from the name; False: it lets it in
    where: str  # "path:line" of the check
    words: str  # what the check does on the target ("raises ValueError '...'")
    whose: str = "engine"  # "engine": its check of a setting; "backend": a backend class's own check


class Validations:
    """The scan's decisions that validate a string (they raise on a bad setting), by string; their
    reach is computed on first use."""

    def __init__(self, reg: Registry) -> None:
        self._reg = reg
        self._by_string: dict[str, list[tuple[FileFacts, Decision]]] | None = None
        self._reached: dict[tuple[int, str], Reached | None] = {}
        self._worded: list[tuple[FileFacts, Decision, frozenset[str]]] | None = None

    def _index(self) -> dict[str, list[tuple[FileFacts, Decision]]]:
        if self._by_string is None:
            self._by_string = {}
            for f in self._reg.files:
                for d in f.decisions:
                    if d.subjects and any(a.action == "error" for a in d.arms):
                        for s in d.subjects:
                            self._by_string.setdefault(s, []).append((f, d))
        return self._by_string

    def _reach(self, f: FileFacts, d: Decision, name: str) -> Reached | None:
        key = (id(d), name)
        if key not in self._reached:
            self._reached[key] = reached(d, self._reg.context(d.scope, f, frozenset({name})))
        return self._reached[key]

    def _refusals(self) -> list[tuple[FileFacts, Decision, frozenset[str]]]:
        """Each decision with a refusal that words what it refuses, with the lead words of its words."""
        if self._worded is None:
            self._worded = []
            for f in self._reg.files:
                for d in f.decisions:
                    for a in d.arms:
                        lead = _WORDS.findall(a.summary.partition("'")[2].lower())[:_LEAD_WORDS]
                        if a.action == "error" and lead:
                            self._worded.append((f, d, frozenset(lead)))
                            break
        return self._worded

    def refused_alike(
        self, subject: frozenset[str], target: str, owners: list[str], judged: Decision
    ) -> Verdict | None:
        """The engine's own refusal of the target, in words that lead with every word of `subject`
        (`flashinfer_kda_prefill_default`: "FlashInfer KDA prefill requires SM100 or SM103"), where
        one of the owners gets on: the feature a function is named for, refused where it is run
        (not by `judged` itself, the decision this is asked for)."""
        if len(subject) < _MIN_SUBJECT:
            return None
        for f, d, lead in self._refusals():
            if d is judged or not subject <= lead:
                continue
            r = reached(d, self._reg.context(d.scope, f))
            mine = r.reach.get(target) if r is not None else None
            if r is None or not mine or _gets_on(d, mine):
                continue
            if any(_gets_on(d, r.reach.get(cc, ())) for cc in owners):
                return Verdict(True, f"{f.path}:{d.arms[mine[0]].line}", d.arms[mine[0]].summary)
        return None

    def worded(self, settings: tuple[str, ...], target: str) -> Verdict | None:
        """The engine's check of a value the path gives a setting (`fp8_gemm_runner_backend=
        flashinfer_cutedsl`) whose refusal the target may reach, its test hanging on more than the
        arch (a library's own support query), in words that name that very setting and value
        (`--fp8-gemm-backend=flashinfer_cutedsl ... requires an SM100/SM103 GPU`): what the engine
        says the value requires, for the caller to read the archs in (None when no check does)."""
        for pair in settings:
            setting, _, value = pair.partition("=")
            for f, d in self._index().get(value, []):
                r = self._reach(f, d, value)
                for i in r.reach.get(target, ()) if r is not None else ():
                    arm = d.arms[i]
                    if arm.action != "error" or not arm.stated or r.value(i, target) is not None:
                        continue
                    asked = _FLAG_VALUE.findall(f"{arm.stated} {arm.summary}".lower())
                    if any(v == value.lower() and _flag_of(setting, flag) for flag, v in asked):
                        return Verdict(True, f"{f.path}:{arm.line}", arm.stated)
        return None

    def verdict(self, name: str, target: str, owners: list[str], setting: str = "") -> Verdict | None:
        """What the engine's checks of `name` do on `target` (the setting taken to be `name`), where
        they let `owners` through: a refusal wins over an admission (one check that turns the
        target away is enough). A check admits the target when one of its refusals can turn
        another arch away and never the target (`not (is_sm90 or is_sm100 or is_sm120)`), and the
        target gets on."""
        admitted: Verdict | None = None
        for f, d in self._index().get(name, []):
            r = self._reach(f, d, name)
            if r is None or not r.reach.get(target):
                continue
            if not any(_gets_on(d, r.reach.get(cc, ())) for cc in owners):
                continue  # a check the owners fail as well says nothing about the difference
            mine = r.reach[target]
            if not _gets_on(d, mine) and _about(name, d.arms[mine[0]].summary):
                # every arm the target can reach raises, in words about the name itself
                return Verdict(True, f"{f.path}:{d.arms[mine[0]].line}", d.arms[mine[0]].summary)
            refusals = [k for k, a in enumerate(d.arms) if a.action == "error" and a.test is not None]
            spares = [k for k in refusals if r.value(k, target) is False and _can_refuse_others(r, k, target)]
            if admitted is None and spares and _same_setting(setting, d.arms[spares[0]].summary):
                admitted = Verdict(False, f"{f.path}:{d.arms[spares[0]].line}", "lets it through")
        return admitted


_FLAG = re.compile(r"--([a-z0-9][a-z0-9-]*)")
# `--fp8-gemm-backend=flashinfer_cutedsl`: a flag and the value it is asked to be
_FLAG_VALUE = re.compile(r"--([a-z0-9][a-z0-9-]*)[= ]([a-z0-9][\w\-.]*)")


def _flag_of(setting: str, flag: str) -> bool:
    """Is the command-line flag (`fp8-gemm-backend`) the setting's (`fp8_gemm_runner_backend`):
    each of its words one of the setting's?"""
    words = set(setting.lower().split("_"))
    return all(w in words for w in flag.split("-"))


def _same_setting(setting: str, message: str) -> bool:
    """Is a check whose refusal names a command-line flag (`--fp8-gemm-backend=cutlass`) about
    `setting` (`fmha_backend`: no; a value named alike is another setting's)? True when either
    is unknown."""
    flags = [f.replace("-", "_") for f in _FLAG.findall(message.lower())]
    return not setting or not flags or any(setting.lower() in f or f in setting.lower() for f in flags)


def _gets_on(d: Decision, arms: tuple[int, ...]) -> bool:
    """Can an arch that reaches these arms get past the check (reach an arm that raises nothing)?"""
    return any(d.arms[i].action != "error" for i in arms)


def _can_refuse_others(r: Reached, arm: int, target: str) -> bool:
    """Can the refusal turn another arch away (its test holds, or depends on the setting checked)?"""
    return any(r.value(arm, cc) is not False for cc in r.reach if cc != target)


_WORDS = re.compile(r"[a-z0-9]+")


def _about(name: str, summary: str) -> bool:
    """Does the refusal's message lead with the name (`'TRTLLM MHA backend is only supported on
    ...'` for "trtllm_mha")? One that only mentions it further on is about something else that
    uses it ('Deterministic inference with ... on the fa4 backend requires ...'), a mode the check
    sits under."""
    quoted = summary.partition("'")[2].lower()
    lead = _WORDS.findall(quoted)[:_LEAD_WORDS]
    if quoted and "{" in " ".join(quoted.split()[:_LEAD_WORDS]):
        return True  # `f"--gemm-backend {backend.value} requires ..."`: the setting's value itself
    return bool(quoted) and all(word in lead for word in _WORDS.findall(name.lower()))


_LEAD_WORDS = 5
_MIN_SUBJECT = 3  # words a function's name and a refusal share before one is taken for the other
