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
    # Jobs whose log matched most of their calls: a median of a few matched calls (17 of
    # 69 in the H100 study's jobs 14 and 15, 0.2 ms) stood in the range beside the rest
    # (review 12), and the interval's share of the gap was left unsaid ("one part" of it).
    full = [
        r
        for r in rows
        if r["slot_to_task_ms"] is not None
        and r["before_prompt_ms"]
        and 2 * r["slot_to_task_matched"] >= r["before_prompt_calls"]
    ]
    if full:
        logged = [float(r["slot_to_task_ms"] or 0.0) for r in full]
        parts = [float(r["slot_to_task_share"] or 0.0) for r in full]
        firsts = [float(x) for r in full if (x := r["slot_first_use_ms"]) is not None]
        fields = {
            "n": len(full),
            "range": span(lang, fmt.num(min(logged), 1), fmt.num(max(logged), 1)),
            "part": span(lang, fmt.pct(min(parts)), fmt.pct(max(parts))),
        }
        # A slot's later tasks, where the interval is: one median over first and later tasks
        # fell on either side (review 13), so each is given apart.
        if firsts:
            text += " " + tr(
                lang,
                "The server's log times the interval from choosing a slot for the task to "
                "starting it (its 'selected slot' and 'processing task' lines, matched by the "
                "prompt time and tokens it prints): in the {n} jobs whose log matched at least "
                "half their calls, a slot's later tasks waited {range} ms there at the job "
                "medians, a median {part} of each such call's time before the prompt timer, and "
                "a slot's first task {first} ms; what the server "
                "does in that interval is not in its log. The rest (the request and the first "
                "token crossing HTTP, reading and tokenising the prompt, and, with several "
                "slots, waiting for the server's loop) is not isolated.",
                first=span(lang, fmt.num(min(firsts), 2), fmt.num(max(firsts), 2)),
                **fields,
            )
        else:
            text += " " + tr(
                lang,
                "The server's log times the interval from choosing a slot for the task to "
                "starting it (its 'selected slot' and 'processing task' lines, matched by the "
                "prompt time and tokens it prints): in the {n} jobs whose log matched at least "
                "half their calls, {range} ms at the job medians, and of each matched call's "
                "time before the prompt timer a median {part}; "
                "what the server does in that interval is not in its log. The rest (the request "
                "and the first token crossing HTTP, reading and tokenising the prompt, and, with "
                "several slots, waiting for the server's loop) is not isolated.",
                **fields,
            )
    else:
        text += " " + tr(
            lang,
            "No server log of these jobs times any part of it: the request and the first token "
            "crossing HTTP, reading and tokenising the prompt, and waiting for the server's loop "
            "are not isolated.",
        )
    return text


def before_prompt_short(rows: Sequence[TimeRow], lang: str) -> str:
    """A post's one sentence: the study's figures, the jobs' medians and their shares of time
    to first token ('' where no job has them); what the interval holds and which part the
    server's log times are the methods page's and the report's (#45: the paragraph was
    the same in every post)."""
    medians = [r["before_prompt_ms"] for r in rows if r["before_prompt_ms"] is not None]
    shares = [r["before_prompt_share"] for r in rows if r["before_prompt_share"] is not None]
    if not medians or not shares:
        return ""
    return tr(
        lang,
        "Before the prompt timer (the client's time to first token less the server's prompt "
        "time), a call spent {range} ms at the job medians, {share} of its time to first token.",
        range=span(lang, fmt.num(min(medians), 0), fmt.num(max(medians), 0)),
        share=span(lang, fmt.pct(min(shares)), fmt.pct(max(shares))),
    )
