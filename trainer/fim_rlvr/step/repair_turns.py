"""Repair turns in RL rollouts (TrainConfig.repair_turns, the training side of `fim-rlvr eval --repair R`).

After a step's candidates are checked, every sample that failed (not proved, not masked) gets another turn: its
task prompted again with the last attempt and the verifier's diagnostics (fim_rlvr.tasks.repair, the prompt eval
builds), one completion sampled, cleaned and checked through the run's verifier service like any other; up to
`repair_turns` times, a turn waiting for the previous one's verdict.

Which tokens get the gradient: every turn is a sample of its own, in its task's group, with its own prompt (the
repair prompt) and its own completion. Its reward is the verifier's reward for that turn times
`repair_discount ** turn` (turn 0 is the first attempt, undiscounted), so:
- the proving turn is rewarded, discounted (a proof on the second try earns less than one at once);
- the failed turns before it stay in the group as the failures they were (their tokens pushed down);
- the group's baseline is taken over all its turns (a group of G first attempts and its repair turns).

The masking rule holds in every turn: a repair turn's verdict is scored by the same rule as a first attempt's
(fim_rlvr.core.outcomes: only outcomes outside the candidate's control are masked; a repair that hangs or crashes the
checker fails). A masked verdict ends its chain: its outcome says nothing about the candidate, so there is nothing
to repair (eval does the same). Pass rates and the curriculum read first attempts only (StepRecord.first_attempts).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from ..core.protocol import Verdict, VerifyItem
from ..tasks.repair import repair_task
from ..verifier.check import Verifier, send
from .batch import StepRecord
from .sample import Sampling, generation_seed

REPAIR_SEED_STRIDE = 7919
"""Spreads the sampling seeds of repair turns away from those of first attempts (generation_seed's run seed)."""


def needs_repair(verdict: Verdict, timeout_reward: str) -> bool:
    """A sample gets another turn when it was checked and not proved: masked outcomes say nothing to repair."""
    return verdict.kind != "proved" and not verdict.masked(timeout_reward)


def repair_seed(seed: int, step: int, round_: int, turn: int) -> int:
    """The sampling seed of one repair turn: fixed by (run seed, step, sampling round, turn), so resumes repeat it."""
    return generation_seed(seed + REPAIR_SEED_STRIDE * turn, step, round_)


def with_repairs(
    record: StepRecord,
    sampling: Sampling,
    verifier: Verifier,
    *,
    turns: int,
    timeout_reward: str,
    step: int,
    round_: int,
    silence_s: float,
    stop: threading.Event | None = None,
) -> StepRecord:
    """`record` with its failed samples' repair turns (up to `turns` each) added to their groups; `record` itself when
    `turns` is 0. Raises verify.Stopped when `stop` is set while a turn's check is awaited."""
    if turns == 0:
        return record
    groups = [
        replace(g, rollouts=list(g.rollouts), candidates=list(g.candidates), verdicts=list(g.verdicts))
        for g in record.all_groups
    ]
    for group in groups:
        group.turns = group.sample_turns()
    chains = [
        (group, index)
        for group in groups
        for index, verdict in enumerate(group.verdicts)
        if needs_repair(verdict, timeout_reward)
    ]
    gen_seconds = verify_seconds = wait_seconds = 0.0
    for turn in range(1, turns + 1):
        if not chains:
            break
        started = time.perf_counter()
        tasks = [repair_task(g.task, g.candidates[i], g.verdicts[i].kind, g.verdicts[i].diagnostics) for g, i in chains]
        rollouts, candidates = sampling.candidates(tasks, 1, repair_seed(sampling.seed, step, round_, turn))
        gen_seconds += time.perf_counter() - started
        items: list[VerifyItem] = [{"taskId": t.id, "candidate": c} for t, c in zip(tasks, candidates, strict=True)]
        check = send(verifier, items)
        verdicts, waited = check.collect(verifier, silence_s, stop)
        verify_seconds += check.seconds
        wait_seconds += waited
        next_chains = []
        for (group, _), rollout, candidate, verdict in zip(chains, rollouts, candidates, verdicts, strict=True):
            group.rollouts.append(rollout)
            group.candidates.append(candidate)
            group.verdicts.append(verdict)
            group.turns.append(turn)
            if needs_repair(verdict, timeout_reward):
                next_chains.append((group, len(group.verdicts) - 1))
        chains = next_chains
    repaired = {id(old): new for old, new in zip(record.all_groups, groups, strict=True)}
    return StepRecord(
        [repaired.get(id(g), g) for g in record.groups],
        groups,
        record.gen_seconds + gen_seconds,
        record.verify_seconds + verify_seconds,
        record.verify_wait_seconds + wait_seconds,
    )
