"""Paths written for GPUs newer than the target: `is_sm120` read on a B200, `family(100)` or
`is_sm90` on an L40S, a kernel registered for 12.x only, a table keyed by Hopper and Blackwell.

Every GPU that gets such a path came after the target, and a newer GPU of another generation goes
without it as the target does: the path was written for those GPUs (their instructions, their
shared memory, their measured tuning), when the target already had the path it runs, not as a
floor the target falls below. A floor (`has_device_capability(90)`, which every GPU since Hopper
passes) is no such path: an L40S shut out of FP8 by it is judged as any exclusion is. Where the
newest generation alone gets the path (12.x-only code read on a Jetson Thor), the GPUs that go
without it are those with the MMA generation the target has and the owners lack (10.x, tcgen05):
the path is written for a design without it.

Only for targets older than what the code names, so a target newer than the code (the case
capgap is built for) is never judged here.
"""

from __future__ import annotations

from collections.abc import Iterable

from capgap.arch import ArchFacts, all_facts, cc_key


def left_alike(owners: Iterable[str], target: ArchFacts, open_ended: bool = False) -> list[str]:
    """The newer GPUs of other generations that go without the path as the target does ([] unless
    every owner is newer than the target and of another generation, and some such GPU is left out
    too). `open_ended`: the test admits archs newer than any known (`major >= 12`), a floor."""
    owners = set(owners)
    mine = (target.major, target.minor)
    if not owners or any(cc_key(cc) <= mine or cc_key(cc)[0] == target.major for cc in owners):
        return []
    facts = all_facts()
    newer = [cc for cc, a in facts.items() if (a.major, a.minor) > mine and a.major != target.major]
    left = [cc for cc in newer if cc not in owners]
    if left or open_ended:
        return left
    # every newer GPU gets it (12.x-only code read on a Jetson Thor): written for GPUs without the
    # MMA generation the target has (tcgen05), which every other GPU that has it goes without too
    for feat in ("tcgen05", "wgmma"):
        if target.has(feat) and not any(facts[cc].has(feat) for cc in owners):
            return [cc for cc, a in facts.items() if a.has(feat) and cc != target.cc]
    return []


def written_for_newer(owners: Iterable[str], target: ArchFacts, open_ended: bool = False) -> str:
    """Why a path only newer GPUs get is no loss of the target's ("" when it may be one)."""
    owners = sorted(set(owners), key=cc_key)
    left = left_alike(owners, target, open_ended)
    if not left:
        return ""
    return (
        f"written for GPUs newer than {target.cc} ({', '.join(owners)}), not a floor it falls "
        f"below: {', '.join(left)} go without it too"
    )
