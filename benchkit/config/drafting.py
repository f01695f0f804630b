"""Drafting as a factor: which of the spec group's settings a job records and which its
measurement depends on.

Every spec option composes the same keys (type, draft_max, ngram_mode, the draft model at
`model@spec.draft_model`), so one command line can sweep `spec=none,draft` with a draft model
and draft lengths. Hydra's sweep is a cartesian product: spec=none is then launched once per
draft length and draft model, though none of them changes what it measures. benchkit collapses
those duplicates instead of refusing them: the resume key holds only the settings the job's
drafter uses (`as_measured`), so the first spec=none job of each other setting is measured and
the others reuse it (benchkit.results.reuse, a point listed twice). Each still records the values it
was composed with, so every point of the planned space is found in the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from benchkit.config.schema import BenchConfig, SpecConfig, SpecType, to_plain
from benchkit.config.space import Factor

# The Hydra group choice that names the draft model (conf/spec/*.yaml), and its factor name.
DRAFT_CHOICE = "model@spec.draft_model"
DRAFT_MODEL = "draft_model"
DRAFT_MAX = "draft_max"
# The factors that are a drafter's own setting: a drafting verdict compares each drafter
# with spec=none, which has none of them.
DRAFTER_SETTINGS = (DRAFT_MODEL, DRAFT_MAX, "ngram_mode")


def factors(
    cfg: BenchConfig, choices: Mapping[str, str], planned: Iterable[str]
) -> dict[str, Factor]:
    """The drafting factors a job records beside `spec`: a spec=draft job's draft model (its
    group choice, as a sweep names it) and draft length; the draft model in every job of a
    sweep that varies it (composed, used or not, as every swept key is recorded). spec=ngram's
    draft length is recorded only where swept: its default (64) differs from spec=draft's (3)
    by design, which would read as a difference no swept factor explains."""
    out: dict[str, Factor] = {}
    choice = choices.get(DRAFT_CHOICE)
    if cfg.spec.type is SpecType.draft or DRAFT_CHOICE in planned:
        out[DRAFT_MODEL] = choice if choice is not None else _draft_name(cfg)
    if cfg.spec.type is SpecType.draft:
        out[DRAFT_MAX] = cfg.spec.draft_max
    return out


def _draft_name(cfg: BenchConfig) -> str | None:
    """The draft model's name where no group chose it (a user's own config)."""
    return cfg.spec.draft_model.name if cfg.spec.draft_model is not None else None


def as_measured(spec: Mapping[str, object]) -> dict[str, object]:
    """The spec block (as `to_plain` writes it) with every setting the job's drafter does not
    use put back to its default: two jobs that differ only there are one measurement (a
    spec=none job at draft_max=2 and at 4). Defaults, not deletions, so that the keys of jobs
    measured before every spec option composed a draft model stay as they were."""
    default = to_plain(SpecConfig())
    out = dict(spec)
    kind = out.get("type")
    if kind != SpecType.draft.value:
        out["draft_model"] = default["draft_model"]
    if kind != SpecType.ngram.value:
        out["ngram_mode"] = default["ngram_mode"]
    if kind == SpecType.none.value:
        # MTP drafts with server.mtp_draft_max; spec.draft_max drafts nothing here.
        out["draft_max"] = default["draft_max"]
    return out
