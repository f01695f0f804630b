"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ (the first quiet run) and results-twin/ (its twin, the same command run again right
after) alone, standard library only: each job's speed (wall_s / units_completed), drafting,
the server's CPU and the host's other load, its probe answers against the reference job's,
its task score; the twin against the first run point by point; each run's start, end and
/usr/bin/time figures (sweep.log).
Run: python docs/studies/cpu-qwen2.5-coder-real/figures_check.py"""

import json
import math
import re
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {"first": HERE / "results", "twin": HERE / "results-twin"}


def jobs(folder):
    """{job: (result.json, probe answers, task rows)} of one run's job folders."""
    out = {}
    for d in sorted((p for p in folder.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):

        def rows(name, d=d):
            f = d / name
            if not f.exists():
                return []
            return [json.loads(x) for x in f.read_text().splitlines() if x.strip()]

        out[int(d.name)] = (
            json.loads((d / "result.json").read_text()),
            rows("quality.jsonl"),
            rows("task.jsonl"),
        )
    return out


def s_unit(result):
    """Seconds per unit, throughput basis: the replay's wall clock over the units completed."""
    m = result["metrics"]
    return m["wall_s"] / m["units_completed"]


def same_answers(probes, ref):
    """(identical greedy answers, probes, first differing token of each changed answer)."""
    same, firsts = 0, []
    for a, b in zip(probes, ref, strict=True):
        if a["greedy"] == b["greedy"]:
            same += 1
        else:
            n = min(len(a["greedy"]), len(b["greedy"]))
            firsts.append(next((i for i in range(n) if a["greedy"][i] != b["greedy"][i]), n))
    return same, len(ref), firsts


def when(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def key(result):
    f = result["factors"]
    return f["workload"], f["spec"], f["cache_type_k"]


def sweep_time(folder):
    """The /usr/bin/time -v lines of the run's sweep.log: (elapsed, user s, system s)."""
    log = (folder / "sweep.log").read_text()

    def field(name):
        m = re.search(rf"{re.escape(name)}: (\S+)", log)
        return m.group(1) if m else "?"

    return (
        field("Elapsed (wall clock) time (h:mm:ss or m:ss)"),
        float(field("User time (seconds)")),
        float(field("System time (seconds)")),
    )


def table(name, run):
    by_key = {key(r): j for j, (r, _, _) in run.items()}
    ref = by_key[("code-edit-10", "none", "f16")]
    print(f"\n== {name} run ({RUNS[name].name}/): {len(run)} jobs; drift reference job {ref}")
    print(
        "job workload      spec  K     s/unit  decode accept drafted/accepted"
        "  cpu_share cpu_s  other_cores load_max  same-as-ref first-diff task"
    )
    for j, (r, probes, _) in run.items():
        m, t = r["metrics"], r.get("task") or {}
        tel = m.get("telemetry") or {}
        wl, spec, k = key(r)
        same, n, firsts = same_answers(probes, run[ref][1])
        acc = m.get("draft_acceptance")
        share = m.get("server_cpu_share") or 0.0
        print(
            f"{j:>3} {wl:<13} {spec:<5} {k:<5} {s_unit(r):6.2f} {m['decode_tok_s']:6.1f}"
            f"  {'-' if acc is None else f'{acc:4.0%}':>5}"
            f"  {m['draft_tokens']:>5}/{m['draft_tokens_accepted']:<9}"
            # The server's own CPU: the share of its one thread's time it had during the replay,
            # and the CPU seconds it used (share x wall clock).
            f"  {share:9.3f} {share * m['wall_s']:5.1f}"
            f"  {tel.get('host_other_cores', 0):11.3f} {tel.get('load_avg_max', 0):8.2f}"
            f"  {same:>4}/{n:<6} {','.join(map(str, firsts)) or '-':<10}"
            f" {t.get('correct')}/{t.get('items')}"
        )
    starts = [when(r["provenance"]["started_utc"]) for r, _, _ in run.values()]
    ends = [when(r["provenance"]["finished_utc"]) for r, _, _ in run.values()]
    secs = [r["provenance"].get("job_seconds") or 0 for r, _, _ in run.values()]
    shares = [r["metrics"].get("server_cpu_share") or 0 for r, _, _ in run.values()]
    other = [
        (r["metrics"].get("telemetry") or {}).get("host_other_cores") for r, _, _ in run.values()
    ]
    elapsed, user, system = sweep_time(RUNS[name])
    print(
        f"first job started {min(starts):%H:%M:%S}, last finished {max(ends):%H:%M:%S} UTC, "
        f"{(max(ends) - min(starts)).total_seconds():,.0f} s;"
        f" jobs {min(secs):.0f}-{max(secs):.0f} s each"
    )
    print(
        f"/usr/bin/time (sweep.log): {elapsed} elapsed, {user:,.2f} s user + {system:,.2f} s system"
        f" = {user + system:,.0f} s of CPU"
    )
    print(
        f"server's share of its thread during the replays {min(shares):.3f}-{max(shares):.3f}; "
        f"other processes' cores {min(other):.3f}-{max(other):.3f} of 2"
    )
    for wl in ("code-edit-10", "prose-10"):
        m = run[by_key[(wl, "none", "f16")]][0]["metrics"]
        n = m["calls_completed"]
        print(
            f"{wl}: {n} calls replayed, {m['prompt_tokens'] / n:.0f} prompt and "
            f"{m['completion_tokens'] / n:.0f} completion tokens a call (no drafting, K f16)"
        )
    j0 = run[ref][0]
    print(
        f"job {ref}: {j0['provenance']['job_seconds']:.0f} s in all,"
        f" replay {j0['metrics']['wall_s']:.1f} s, "
        f"probe {j0['quality']['seconds']:.1f} s, task {j0['task']['seconds']:.1f} s"
    )
    return by_key


def main():
    runs = {name: jobs(folder) for name, folder in RUNS.items()}
    keys = {name: table(name, run) for name, run in runs.items()}
    first, twin = runs["first"], runs["twin"]
    assert keys["first"] == keys["twin"], "the twin's jobs are not the first run's points"

    print("\n== twin against first, point by point (s/unit; twin / first)")
    logs = []
    for j, (r, _, _) in first.items():
        a, b = s_unit(r), s_unit(twin[j][0])
        logs.append(math.log(b / a))
        same = first[j][1] == twin[j][1] and [x["answer"] for x in first[j][2]] == [
            x["answer"] for x in twin[j][2]
        ]
        wl, spec, k = key(r)
        print(
            f"{j:>3} {wl:<13} {spec:<5} {k:<5} {a:6.2f} {b:6.2f}  {b / a:5.3f}x"
            f"  drafted {r['metrics']['draft_tokens']}/{twin[j][0]['metrics']['draft_tokens']}"
            f"  probe and task answers identical: {same}"
        )
    ratios = [math.exp(x) for x in logs]
    mean = sum(logs) / len(logs)
    print(
        f"twin / first: {min(ratios):.3f}x-{max(ratios):.3f}x,"
        f" geometric mean {math.exp(mean):.3f}x; "
        f"{sum(abs(x) > math.log(1.05) for x in logs)} of {len(logs)} points moved more than 5%"
    )
    # A pair's log ratio holds two runs' noise, so one run's is the pairs' root mean square
    # over the square root of 2 (one degree of freedom a pair).
    one = math.sqrt(sum(x * x for x in logs) / len(logs) / 2)
    print(f"one run's noise: {one:.4f} (sd of log s/unit, {len(logs)} pairs) = about {one:.1%}")

    print("\n== drafting against none, same workload and K type (s/unit ratio: first run, twin)")
    by_key = keys["first"]
    for wl in ("code-edit-10", "prose-10"):
        for k in ("f16", "q8_0", "q4_0"):
            base = by_key[(wl, "none", k)]
            for spec in ("draft", "ngram"):
                j = by_key[(wl, spec, k)]
                print(
                    f"{wl:<13} K {k:<5} {spec:<5} jobs {j:>2}/{base:<2}"
                    f" {s_unit(first[j][0]) / s_unit(first[base][0]):5.2f}x"
                    f" {s_unit(twin[j][0]) / s_unit(twin[base][0]):5.2f}x"
                )

    print("\n== task items answered wrong (task.jsonl; item numbers of fixtures/tasks/qa.yaml)")
    for name, run in runs.items():
        wrong = {}
        for j, (_, _, rows) in run.items():
            wrong.setdefault(tuple(x["item"] for x in rows if not x["score"]), []).append(j)
        for items, js in wrong.items():
            print(f"  {name}: wrong items {list(items)}: jobs {js}")


if __name__ == "__main__":
    main()
