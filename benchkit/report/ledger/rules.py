"""The versions of the rules behind the verdicts: what each changed, recorded as a ledger
entry's `rules` so that a correction can name the rules it was made under."""

from __future__ import annotations

from benchkit.report.lang import N_

# The rules behind the verdicts, recorded as each entry's `rules` (an entry without it was
# published under version 1). A verdict that changed between entries of different rules
# versions names both, and what each later version changed (these texts, translated).
RULES_VERSION = 15
RULES: dict[int, str] = {
    1: N_("knee on aggregate decode throughput; no noise, contamination or runaway-output rules"),
    2: N_(
        "every verdict is judged on the study's objective (seconds per unit, throughput basis, "
        "by default), single-run margins are held against noise, and jobs on another setup and "
        "runaway outputs are named"
    ),
    3: N_(
        "a call far outside its job's own rate is named as a stall, and a verdict resting on a "
        "job whose stalls added at least the smallest counted effect is provisional, stating "
        "its comparisons with and without them; output tok/s, per-sequence decode and sequences "
        "per step, which compare across slot counts, replace the decode-window rate; capped "
        "calls count against a point only where they differ from the points it is compared "
        "with; a knee whose margin to the best is inside the measured noise is the fewest such "
        "count, provisional, the curve flat from there, and a knee is complete only when a "
        "count beyond it was measured; every swept factor gets a verdict, a factor the run "
        "could not exercise (slots beyond the units in flight or at one sequence per step, "
        "batch sizes above every prompt, drafting without drafts) gets none, and an "
        "application's choice (sampling) is never the "
        "recommended setting; a drafter compared "
        "only on another series than the one the other verdicts single out is judged on that "
        "series, named as such and provisional"
    ),
    4: N_(
        "in a raced sweep a point the race stopped is worse than the best that stopped it (the "
        "race's paired test, not its own few units' interval), the series noise a knee is "
        "judged against is the largest pair spread on the most units a pair of the series "
        "shares, and a capped call counts only against peers that made the same call"
    ),
    5: N_(
        "jobs that ran on another card (its UUID in their telemetry) are a setup that differs, "
        "as another build is; a model file is compared only between jobs that recorded it; "
        "energy, busy shares and server counters of a sampler that saw part of a job are not "
        "stated; a race stopped from outside is said to be unfinished"
    ),
    6: N_(
        "a stall in the first work of a server that had no warm-up before its timed pass (the "
        "calls sent before the pass's first call completed) is a cold start: its excess is left "
        "out of the seconds per unit the verdicts compare and named beside them, and makes no "
        "verdict provisional; the report says whether a warm-up preceded each timed pass, and "
        "the ledger keeps each comparison's ratio and seconds per unit, least and most, and "
        "whether the jobs were warmed up, so that a later publication can say how much they "
        "changed and why; a verdict's jobs are compared with each other for a setup that "
        "differs (another card, build or model file), not with the rest of the sweep; a "
        "verdict that compares a point a finished race left undecided is provisional"
    ),
    7: N_(
        "one comparison engine decides the backend and slot verdicts: two points are compared "
        "on the units both ran, paired, on one machine or bridged across machines through a "
        "point measured on both (never directly across machines); each comparison carries its "
        "own interval, the range a repeat of it would fall in at 95%, and is decided when that "
        "range clears the margin; a knee is the fewest count within the margin of the best, "
        "complete only when every count below it is decided slower and the knee itself decided "
        "within; any comparison left open makes its verdict provisional, named with the units "
        "that would decide it"
    ),
    8: N_(
        "the drafting, factor and projection verdicts and the racing sweeper ask the same "
        "comparison engine: a drafter helps or hurts where its on/off comparison is decided "
        "faster or slower, and no difference where it is decided within the margin; a factor's "
        "best value is complete only when every other value is decided against it; the "
        "projection's faster point is named only where its comparison is decided; a race stops "
        "a point only where the engine decides it slower than the best, on one machine or "
        "through a point measured on both; a knee resting on a slot count whose units did not "
        "fill whole rounds of its slots is provisional (the run did not exercise it), and a "
        "knee drawn on one series says so, with the other series' knees where they differ; "
        "a comparison of two single runs adds two runs' run-to-run noise to its interval, "
        "measured on twin jobs of one machine (a sweep run again as anchors) or declared "
        "(study.noise), and where neither exists its range is its units' alone and its "
        "verdict provisional, since a whole run can shift every unit alike; a drafter whose "
        "drafts were accepted less than 10% of the time at every setting is provisional and "
        "said to measure drafting's cost, not its benefit"
    ),
    9: N_(
        "a comparison's interval is the ratio estimator's, from each unit's residual against "
        "the ratio of sums, so it is centred on the ratio the table shows (the per-unit "
        "log-ratios' spread had centred it on their geometric mean); the drift probe's KL "
        "divergence bounds the tokens only one top-k list holds by that list's last entry "
        "(with the rest lumped, two distributions whose top tokens differ read as nearly "
        "identical), and a flipped top token is stated with the reference's own gap between "
        "the two; the decode roofline's share is given only where the one-sequence ceiling "
        "bounds the step (not for batched steps of a mixture of experts)"
    ),
    10: N_(
        "a knee rests on no other count being faster than the best beyond the margin, so a "
        "larger count whose interval reaches past it, or that ran on another machine, leaves "
        "it open; a job that found much more of its card's memory in use at its start than "
        "the sweep's other jobs (llama-server --list-devices) ran on a shared card, another "
        "machine; a decision that holds only with a cold start left out is provisional, with "
        "the comparison as measured beside it; the racing table compares each point the race "
        "decided again as the verdicts do, and names where they differ"
    ),
    11: N_(
        "a raced point stopped early is restated only from the points measured on its own "
        "machine, and the projection, headline included, says how many of its units it "
        "measured; a provisional knee says between which counts it may lie (from the fewest "
        "count not decided slower than the best to the best where the knee itself is not "
        "decided within the margin); a backend verdict whose backends' builds differ in more "
        "than the backend (portable against native, built on another system) says so and "
        "stays provisional; a bridge between machines holds the spread of their ratio from "
        "point to point where two points ran on both, and says it is not measured where one "
        "did; energy is compared on the anchor runs where a setting's jobs ran on two cards; a "
        "headline names no drafting effect that only a cold start's leaving out decides; a CPU "
        "server whose threads had under 80% of their time while other processes kept half a "
        "core busy ran on a host busy with other work, a machine state of its own, and a "
        "verdict whose every pair crosses machine states names no effect; a workload is stated, "
        "never recommended"
    ),
    12: N_(
        "a call's decoding is charged only with the time its server did not spend on other "
        "calls' prompts (a wave of prompts arriving together holds every slot's decoding up: "
        "contention, not the call's own slowness), so a first wave's contention is no cold "
        "start; every figure that leaves out a cold start has the figure as measured beside "
        "it, each comparison that leaving out changes too; a knee placed only by comparisons "
        "across machines says so, not 'by the figures'; a table's ratio is given only where the "
        "verdict compared those very jobs on one machine, and a comparison across machines "
        "with no bridge has no interval; a verdict resting on figures the results say were "
        "derived, not measured, is provisional; a partial round of slots is named only where "
        "its measured idle exceeds that of the counts with whole rounds; a bench rate next to "
        "a cold bench row is bounded by the warm batch alone; the workload is described by the "
        "units the jobs replayed"
    ),
    13: N_(
        "a comparison paired on fewer units than either point's figure holds gives the two "
        "means on those units beside its ratio; the report's definitions say how a ratio, its "
        "interval (a replication interval: the square root of 2 times t times its standard "
        "error), a decision and a bridge are obtained; a figure a race partly imputed is "
        "marked in the results table, with the job's own figure on the units it ran beside it, "
        "in the table's note, the projection and the headline; the knee may lie up to the "
        "largest count not settled against the best, and no larger count is said to be no "
        "faster unless each was compared on one machine state"
    ),
    14: N_(
        "two machines that share no point are bridged through a chain of machines, one point "
        "run on both machines of each step, the steps' log ratios and variances added; a job a "
        "race extended onto another card has each run's units placed on that run's card where "
        "it had a card of its own, and where which unit ran on which card is not known it is "
        "paired with nothing, not even a job of the same cards; one machine's figures with no "
        "unit in common give way to a bridge with an interval; a job that started with much "
        "more of its card's memory in use is said to have, not to have run on another machine; "
        "a projection from a sweep of several machines names the machine its figure is of and "
        "how far the sweep's machines differed on one point"
    ),
    15: N_(
        "where no card names a job's machine, its boot of the host does (recorded from this "
        "version on), as lent machines share a host name; a sweep's own jobs of separate "
        "sweeps known only by a hardware profile and host name are separate machine states, "
        "and an anchor folder's such jobs are said to be assumed one machine; a table row "
        "whose verdict pairs other jobs than the row's gives that pair's own figures; settings "
        "where a drafter drafted nothing are given with the ratios measured there, its lookup "
        "having run, not as the same work as off; a bridge a step of which shares one point "
        "holds the study's largest measured card-by-point term in its place, and no term "
        "added to a bridge gives it more degrees of freedom than its legs; across machines a "
        "job measured on several cards is compared whole; a drafting effect that only a cold "
        "start's leaving out decides is named by no headline"
    ),
}
