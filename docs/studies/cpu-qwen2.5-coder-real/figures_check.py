"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ alone (standard library only): each job's speed, drafting, host load, its probe answers
against the reference job's and against its own workload's f16 no-drafting job, its task score,
and the sweep's wall time. Run: python docs/studies/cpu-qwen2.5-coder-real/figures_check.py"""

import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def jobs():
    """Every job folder's result.json and probe answers, in job order."""
    out = []
    for d in sorted((p for p in RESULTS.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
        result = json.loads((d / "result.json").read_text())
        q = d / "quality.jsonl"
        probes = (
            [json.loads(x) for x in q.read_text().splitlines() if x.strip()] if q.exists() else []
        )
        out.append((int(d.name), result, probes))
    return out


def answers(probes, ref):
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


def main():
    all_jobs = jobs()
    key = {
        j: (r["factors"]["workload"], r["factors"]["spec"], r["factors"]["cache_type_k"])
        for j, r, _ in all_jobs
    }
    by_key = {k: j for j, k in key.items()}
    probes = {j: p for j, _, p in all_jobs}
    ref = by_key[("code-edit-10", "none", "f16")]
    print(f"== {len(all_jobs)} jobs; drift reference job {ref} (code-edit-10, spec=none, K f16)")
    print(
        "job workload      spec  K     s/unit decode  accept  drafted/accepted"
        "  load_max other_cores cpu_share cpu_s"
        "  same-as-ref first-diff  same-as-own-f16  task"
    )
    for j, r, _ in all_jobs:
        m, t = r["metrics"], r.get("task") or {}
        tel = m.get("telemetry") or {}
        wl, spec, k = key[j]
        own = by_key.get((wl, "none", "f16"))
        s_ref, n_ref, f_ref = answers(probes[j], probes[ref])
        s_own, n_own, _ = answers(probes[j], probes[own]) if own is not None else (0, 0, [])
        acc = m.get("draft_acceptance")
        share = m.get("server_cpu_share") or 0.0
        print(
            f"{j:>3} {wl:<13} {spec:<5} {k:<5} {m['s_per_unit_throughput']:6.2f}"
            f" {m['decode_tok_s']:6.1f}  {'-' if acc is None else f'{acc:5.0%}':>6}"
            f"  {m['draft_tokens']:>7}/{m['draft_tokens_accepted']:<8}"
            f"  {tel.get('load_avg_max', 0):8.2f} {tel.get('host_other_cores', 0):11.2f}"
            # The server's own CPU: the share of its one thread's time it had, and the CPU
            # seconds it used (share x wall clock), which other processes barely change.
            f" {share:9.2f} {share * m['wall_s']:5.1f}"
            f"  {s_ref:>4}/{n_ref:<6} {','.join(map(str, f_ref)) or '-':<10} {s_own:>4}/{n_own:<10}"
            f"  {t.get('correct')}/{t.get('items')}"
        )
    print("\n== draft against none, same workload and K type (s/unit ratio)")
    for wl in ("code-edit-10", "prose-10"):
        for k in ("f16", "q8_0", "q4_0"):
            base = all_jobs[by_key[(wl, "none", k)]][1]["metrics"]["s_per_unit_throughput"]
            for spec in ("draft", "ngram"):
                m = all_jobs[by_key[(wl, spec, k)]][1]["metrics"]
                print(f"{wl:<13} K {k:<5} {spec:<5} {m['s_per_unit_throughput'] / base:5.2f}x")
    print("\n== task items answered wrong (task.jsonl; item numbers of fixtures/tasks/qa.yaml)")
    wrong = {}
    for j, _, _ in all_jobs:
        rows = [
            json.loads(x)
            for x in (RESULTS / str(j) / "task.jsonl").read_text().splitlines()
            if x.strip()
        ]
        wrong.setdefault(tuple(r["item"] for r in rows if not r["score"]), []).append(j)
        if j in (0, by_key[("code-edit-10", "none", "q4_0")]):
            for r in rows:
                if r["item"] in (2, 3, 8, 10):
                    print(
                        f"  job {j} item {r['item']}: {r['answer'][:48]!r}"
                        f" (right: {bool(r['score'])})"
                    )
    for items, js in wrong.items():
        print(f"  wrong items {list(items)}: jobs {js}")
    starts = [when(r["provenance"]["started_utc"]) for _, r, _ in all_jobs]
    ends = [when(r["provenance"]["finished_utc"]) for _, r, _ in all_jobs]
    secs = [r["provenance"].get("job_seconds") or 0 for _, r, _ in all_jobs]
    print(
        f"\n== the sweep: first job started {min(starts):%H:%M:%S}, "
        f"last finished {max(ends):%H:%M:%S} UTC, "
        f"{(max(ends) - min(starts)).total_seconds():.0f} s; jobs' own seconds {sum(secs):.0f} "
        f"(each {min(secs):.0f}-{max(secs):.0f})"
    )
    for j, r, _ in all_jobs[:1]:
        print(
            f"job {j}: {r['provenance']['job_seconds']:.0f} s in all, "
            f"replay {r['metrics']['wall_s']:.1f} s, "
            f"probe {r['quality']['seconds']:.1f} s, task {r['task']['seconds']:.1f} s"
        )
    loads = [(r["metrics"].get("telemetry") or {}).get("load_avg_max") for _, r, _ in all_jobs]
    other = [(r["metrics"].get("telemetry") or {}).get("host_other_cores") for _, r, _ in all_jobs]
    print(
        f"host load average (max per job) {min(loads):.2f}-{max(loads):.2f}; "
        f"other processes' cores during the replay {min(other):.2f}-{max(other):.2f} of 2"
    )


if __name__ == "__main__":
    main()
