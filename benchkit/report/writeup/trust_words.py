"""What the report says of results it could not take as verified (benchkit.trust): one
sentence a kind, naming the jobs, at the head of the measurement caveats (a result left out
is also among the points without a complete result, its reason in i18n.recorded_reason)."""

from __future__ import annotations

from collections.abc import Sequence

from benchkit.report.lang import tr
from benchkit.report.lang.i18n import jobs_text
from benchkit.results.store import JobResult
from benchkit.results.trust import MEASURED_STATUSES, Trust


def _who(jobs: list[str], every: bool, lang: str) -> str:
    return tr(lang, "every job") if every and len(jobs) > 1 else jobs_text(jobs, lang)


def _sentence(kind: Trust, who: str, lang: str) -> str:
    if kind is Trust.BROKEN:
        text = tr(
            lang,
            "{who}: result.json does not match its digest (it was edited after benchkit wrote "
            "it), so its figures are left out of this report and its point counts as not "
            "complete.",
            who=who,
        )
    elif kind is Trust.FOREIGN:
        text = tr(
            lang,
            "{who}: the results were signed with another user's key, which this user's key "
            "cannot verify; their figures are shown as read, not as verified.",
            who=who,
        )
    elif kind is Trust.UNKEYED:
        text = tr(
            lang,
            "{who}: the results carry an unkeyed digest (written before benchkit signed "
            "results with a key): it shows the files are whole, not who made them, since "
            "whoever edits them can compute it again.",
            who=who,
        )
    else:
        text = tr(
            lang,
            "{who}: the results carry no digest (written before benchkit recorded one, or by "
            "hand): nothing shows their figures are as measured.",
            who=who,
        )
    return text[:1].upper() + text[1:]


def trust_sentences(results: Sequence[JobResult], lang: str, *, unsigned: bool = True) -> list[str]:
    """One sentence for each kind of result the report could not verify, naming its jobs
    (none when every result with figures is signed with this user's key and unchanged).
    Without `unsigned`, none for results without a digest (a post: its report says it)."""
    # A left-out result is read as failed; the others by their own status.
    judged = [r for r in results if r.trust is Trust.BROKEN or r.status in MEASURED_STATUSES]
    out = []
    kinds = (Trust.BROKEN, Trust.FOREIGN, Trust.UNKEYED, *([Trust.UNSIGNED] if unsigned else []))
    for kind in kinds:
        jobs = [r.job_dir.name for r in judged if r.trust is kind]
        if jobs:
            out.append(_sentence(kind, _who(jobs, len(jobs) == len(judged), lang), lang))
    return out
