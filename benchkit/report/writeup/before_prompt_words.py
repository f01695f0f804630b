"""The sentence under "Where the time went" about the time before the server's prompt timer
(report.analysis.before_prompt): its size across the study's jobs, its share of time to first
token, the part the server's log times, and what is not isolated. A review found about 100 ms
of each GPU call's time to first token, near half of it, in no table."""

from __future__ import annotations

from collections.abc import Sequence

from benchkit.report.lang import fmt, i18n, span, tr, trc
from benchkit.report.writeup.time_rows import TimeRow


def before_prompt_line(rows: Sequence[TimeRow], lang: str) -> str:
    """The study's figures: the jobs' medians, their shares of time to first token, and the
    part the log times ('' where no job has the figure)."""
    medians = [r["before_prompt_ms"] for r in rows if r["before_prompt_ms"] is not None]
    shares = [r["before_prompt_share"] for r in rows if r["before_prompt_share"] is not None]
    if not medians or not shares:
        return ""
    text = tr(
        lang,
        "Before the prompt timer: a call's time to first token as the client measured it, less "
        "the prompt time the server reported for it, had job medians of {range} ms, {share} of "
        "the call's time to first token at the job medians (the table's last three columns).",
        range=span(lang, fmt.num(min(medians), 0), fmt.num(max(medians), 0)),
        share=span(lang, fmt.pct(min(shares)), fmt.pct(max(shares))),
    )
    one = [r for r in rows if r["before_prompt_wall_share"] is not None]
    if one:
        walls = [float(r["before_prompt_wall_share"] or 0.0) for r in one]
        text += " " + tr(
            lang,
            "With one slot, where one call runs at a time, the calls' intervals before the prompt "
            "timer summed to {share} of the job's wall clock ({jobs}).",
            share=span(lang, fmt.pct(min(walls)), fmt.pct(max(walls))),
            # Every job of the table ran one slot: said so, not eighteen numbers.
            jobs=trc(lang, "one-slot jobs", "every job")
            if len(one) > 1 and len(one) == len(rows)
            else i18n.jobs_text(sorted((r["job"] for r in one), key=lambda j: (len(j), j)), lang),
        )
    logged = [r["slot_to_task_ms"] for r in rows if r["slot_to_task_ms"] is not None]
    if logged:
        text += " " + tr(
            lang,
            "The server's log times one part of it, from choosing a slot for the task to "
            "starting it (its 'selected slot' and 'processing task' lines, matched to {matched} "
            "of the {calls} calls by the prompt time and tokens it prints): {range} ms at the "
            "job medians; what the "
            "server does in that interval is not in its log. The rest (the request and the first "
            "token crossing HTTP, reading and tokenising the prompt, and, with several slots, "
            "waiting for the server's loop) is not isolated.",
            range=span(lang, fmt.num(min(logged), 1), fmt.num(max(logged), 1)),
            matched=fmt.integer(sum(r["slot_to_task_matched"] for r in rows)),
            calls=fmt.integer(sum(r["before_prompt_calls"] for r in rows)),
        )
    else:
        text += " " + tr(
            lang,
            "No server log of these jobs times any part of it: the request and the first token "
            "crossing HTTP, reading and tokenising the prompt, and waiting for the server's loop "
            "are not isolated.",
        )
    return text
