"""Drift: how far one job's probe answers are from a reference job's (benchkit.quality.probe
wrote both), in four numbers a reader can weigh beside a speed verdict.

- **identical**: the share of probes whose greedy tokens are the reference's, token for token;
- **first difference**: for the probes that differ, the mean position (0-based) of the first
  differing token: late differences are near-ties tipping, early ones change the answer;
- **top-1 agreement**: the share of forced positions where both jobs' most likely next token
  is the same;
- **KL divergence** KL(reference || job) per forced position, in nats, averaged. Only the top-k
  of each distribution is known, so it is a lower bound: the tokens both lists hold are
  counted one by one, the rest in three cells (tokens only one list holds, on each side, and
  the remainder) at the least KL their unknown masses allow, given that a token missing from
  a list is no likelier than its last entry. Merging outcomes never raises a KL divergence,
  so this never exceeds the full one, and it is exact when k is the vocabulary.

Two jobs are comparable only when their probes are the same token ids (same tokenizer, same
workload, same probe settings); otherwise `compare` says why not.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkit.quality.probe import ProbeRecord
from benchkit.results import bounded

EPS = 1e-12


def read_probes(path: Path) -> list[ProbeRecord]:
    return [json.loads(line) for line in bounded.lines(path) if line.strip()]


def kl_lumped(p_top: Sequence[Sequence[float]], q_top: Sequence[Sequence[float]]) -> float:
    """A lower bound of KL(p || q) in nats from two top-k lists (see `_BoundCells`)."""
    p = {int(t): math.exp(lp) for t, lp in p_top}
    q = {int(t): math.exp(lp) for t, lp in q_top}
    shared = p.keys() & q.keys()
    kl = sum(p[t] * math.log(p[t] / max(q[t], EPS)) for t in shared if p[t] > 0)
    return max(0.0, kl + _BoundCells.of(p, q, shared).least())


@dataclass(frozen=True)
class _BoundCells:
    """The mass outside the shared tokens, in three cells: A, the tokens only p's list holds
    (p known, q(A) unknown); B, those only q's list holds (q known, p(B) unknown); C, the rest.
    A token missing from a top-k list is no likelier than that list's last entry, so q(A) is
    at most |A| x q's smallest listed probability, and p(B) likewise. KL over any partition
    never exceeds the full one, so its least value over the unknowns is a lower bound of the
    full KL. Lumping A, B and C into one cell (the bound before) fell to about 0 whenever the
    lists barely overlapped: two distributions with different top tokens read as identical.
    """

    p_a: float
    q_b: float
    p_rest: float  # p(B) + p(C)
    q_rest: float  # q(A) + q(C)
    x_max: float  # the most p(B) can be
    y_max: float  # the most q(A) can be

    @staticmethod
    def of(p: Mapping[int, float], q: Mapping[int, float], shared: set[int]) -> _BoundCells:
        only_p = [t for t in p if t not in shared]
        only_q = [t for t in q if t not in shared]
        p_rest = max(0.0, 1.0 - sum(p.values()))
        q_rest = max(0.0, 1.0 - sum(q.values()))
        p_a = sum(p[t] for t in only_p)
        q_b = sum(q[t] for t in only_q)
        return _BoundCells(
            p_a=p_a,
            q_b=q_b,
            p_rest=p_rest,
            q_rest=q_rest,
            x_max=min(p_rest, len(only_q) * min(p.values(), default=0.0)),
            y_max=min(q_rest, len(only_p) * min(q.values(), default=0.0)),
        )

    def value(self, x: float, y: float) -> float:
        """KL over cells A, B and C with p(B) = x and q(A) = y."""
        return _term(self.p_a, y) + _term(x, self.q_b) + _term(self.p_rest - x, self.q_rest - y)

    def least(self) -> float:
        """The least value over 0 <= x <= x_max, 0 <= y <= y_max. The function is jointly
        convex, and each coordinate's minimum has a closed form (clamped to its box), so
        coordinate descent converges to it; 40 rounds settle it far below any shown digit."""
        x, y = 0.0, self.y_max
        for _ in range(40):
            q_c = self.q_rest - y
            x = _clamp(self.p_rest * self.q_b / (self.q_b + q_c), self.x_max) if self.q_b else 0
            p_c = self.p_rest - x
            y = _clamp(self.p_a * self.q_rest / (self.p_a + p_c), self.y_max) if self.p_a else 0
        return self.value(x, y)


def _term(a: float, b: float) -> float:
    """a log(a / b), 0 where a is 0; b floored at EPS (a mass q gives no room to)."""
    return a * math.log(a / max(b, EPS)) if a > EPS else 0.0


def _clamp(v: float, hi: float) -> float:
    return min(max(v, 0.0), hi)


def margin(top: Sequence[Sequence[float]]) -> float:
    """1 - p(second) / p(first) of one position's top list: 0 is a tie."""
    first, second = sorted((v for _, v in top), reverse=True)[:2]
    return 1.0 - math.exp(second - first)


def top1(top: Sequence[Sequence[float]]) -> int | None:
    return int(max(top, key=lambda x: x[1])[0]) if top else None


@dataclass(frozen=True)
class Drift:
    """One job's drift from the reference (see the module docstring)."""

    probes: int
    identical: int
    first_diff_mean: float | None
    positions: int
    top1_agreement: float | None
    kld_mean: float | None
    kld_max: float | None
    # Forced positions one of the two jobs has no probabilities for (not in the means).
    positions_missing: int
    # Where the likeliest tokens differ: the median of how far apart the reference held the
    # two (1 - p(job's top) / p(its own top)); small means a near-tie tipped. None: no flip,
    # or the job's top token was not in the reference's list.
    flip_gap: float | None = None

    @property
    def identical_share(self) -> float:
        return self.identical / self.probes if self.probes else 0.0

    @property
    def changed(self) -> int:
        return self.probes - self.identical

    def to_json(self) -> dict[str, object]:
        return {
            "probes": self.probes,
            "identical": self.identical,
            "identical_share": self.identical_share,
            "changed_share": 1 - self.identical_share if self.probes else None,
            "first_diff_mean": self.first_diff_mean,
            "positions": self.positions,
            "top1_agreement": self.top1_agreement,
            "kld_mean": self.kld_mean,
            "kld_max": self.kld_max,
            "positions_missing": self.positions_missing,
            "flip_gap": self.flip_gap,
        }


def not_comparable(job: Sequence[ProbeRecord], ref: Sequence[ProbeRecord]) -> str | None:
    """Why the two probe sets cannot be compared, or None when they can."""
    if not job or not ref:
        return "no probe"
    if len(job) != len(ref):
        return f"{len(job)} probes against the reference's {len(ref)}"
    for a, b in zip(job, ref, strict=True):
        if a["forced"] != b["forced"] or a["prompt_tokens"] != b["prompt_tokens"]:
            return (
                f"probe {a['probe']} is other tokens than the reference's (another tokenizer, "
                "workload or probe setting)"
            )
    return None


def compare(job: Sequence[ProbeRecord], ref: Sequence[ProbeRecord]) -> Drift:
    """The job's drift from the reference; the probe sets must be comparable."""
    why = not_comparable(job, ref)
    if why is not None:
        raise ValueError(why)
    pairs = [(a, b) for a, b in zip(job, ref, strict=True) if not a["error"] and not b["error"]]
    identical = 0
    firsts: list[int] = []
    kls: list[float] = []
    agree = 0
    missing = 0
    gaps: list[float] = []
    for a, b in pairs:
        if a["greedy"] == b["greedy"]:
            identical += 1
        else:
            n = min(len(a["greedy"]), len(b["greedy"]))
            firsts.append(next((i for i in range(n) if a["greedy"][i] != b["greedy"][i]), n))
        for qa, pb in zip(a["top"], b["top"], strict=False):
            if not qa or not pb:
                missing += 1
                continue
            kls.append(kl_lumped(pb, qa))
            mine, theirs = top1(qa), top1(pb)
            agree += mine == theirs
            if mine != theirs and (gap := _gap(pb, theirs, mine)) is not None:
                gaps.append(gap)
    missing += sum(
        len(a["forced"]) for a, b in zip(job, ref, strict=True) if a["error"] or b["error"]
    )
    return Drift(
        probes=len(pairs),
        identical=identical,
        first_diff_mean=sum(firsts) / len(firsts) if firsts else None,
        positions=len(kls),
        top1_agreement=agree / len(kls) if kls else None,
        kld_mean=sum(kls) / len(kls) if kls else None,
        kld_max=max(kls) if kls else None,
        positions_missing=missing,
        flip_gap=statistics.median(gaps) if gaps else None,
    )


def _gap(
    ref_top: Sequence[Sequence[float]], ref_best: int | None, other: int | None
) -> float | None:
    """1 - p(other) / p(ref_best) in the reference's list, None where `other` is not in it."""
    lp = {int(t): v for t, v in ref_top}
    if ref_best is None or other is None or other not in lp:
        return None
    return 1.0 - math.exp(lp[other] - lp[ref_best])


def drift_table(
    probes: Mapping[str, Sequence[ProbeRecord]], reference: str
) -> dict[str, Drift | str]:
    """Every job's drift from `reference` (a job id), or why it has none."""
    ref = probes.get(reference) or []
    out: dict[str, Drift | str] = {}
    for job, recs in probes.items():
        why = not_comparable(recs, ref)
        out[job] = why if why is not None else compare(recs, ref)
    return out
