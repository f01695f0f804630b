"""Drift: how far one job's probe answers are from a reference job's (benchkit.quality.probe
wrote both), in four numbers a reader can weigh beside a speed verdict.

- **identical**: the share of probes whose greedy tokens are the reference's, token for token;
- **first difference**: for the probes that differ, the mean position (0-based) of the first
  differing token: late differences are near-ties tipping, early ones change the answer;
- **top-1 agreement**: the share of forced positions where both jobs' most likely next token
  is the same;
- **KL divergence** KL(reference || job) per forced position, in nats, averaged. Only the top-k
  of each distribution is known, so it is taken over the tokens in both top-k lists, the rest of
  each distribution's mass lumped into one outcome. Merging outcomes never raises a KL
  divergence, so this is a lower bound of the full one, and exact when k is the vocabulary.

Two jobs are comparable only when their probes are the same token ids (same tokenizer, same
workload, same probe settings); otherwise `compare` says why not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkit import bounded
from benchkit.quality.probe import ProbeRecord

EPS = 1e-12


def read_probes(path: Path) -> list[ProbeRecord]:
    return [json.loads(line) for line in bounded.lines(path) if line.strip()]


def kl_lumped(p_top: Sequence[Sequence[float]], q_top: Sequence[Sequence[float]]) -> float:
    """KL(p || q) in nats over the tokens both top-k lists hold, the rest of each lumped."""
    p = {int(t): math.exp(lp) for t, lp in p_top}
    q = {int(t): math.exp(lp) for t, lp in q_top}
    shared = p.keys() & q.keys()
    kl = sum(p[t] * math.log(p[t] / max(q[t], EPS)) for t in shared if p[t] > 0)
    p_rest = max(0.0, 1.0 - sum(p[t] for t in shared))
    q_rest = max(0.0, 1.0 - sum(q[t] for t in shared))
    if p_rest > EPS:
        kl += p_rest * math.log(p_rest / max(q_rest, EPS))
    return max(0.0, kl)


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
            agree += top1(qa) == top1(pb)
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
    )


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
