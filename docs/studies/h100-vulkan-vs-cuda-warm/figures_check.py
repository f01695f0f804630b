"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ alone (standard library only). Run: python docs/studies/h100-vulkan-vs-cuda-warm/figures_check.py"""

import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _t(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main() -> None:
    print("job  backend slots mtp  status      units  s/unit(tp)  warm-up s (calls)  launch s")
    walls, energy = {}, {}
    for d in sorted((p for p in RESULTS.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
        r = json.loads((d / "result.json").read_text())
        f, m, p = r["factors"], r["metrics"], r["provenance"]
        w = p.get("warmup") or {}
        wall = m.get("wall_s") or 0.0
        took = p.get("job_seconds") or 0.0
        walls[(f["backend"], int(f["slots"]), str(f["mtp"]))] = m.get("s_per_unit_throughput")
        # benchkit's rule (telemetry.is_partial): a sampler window short of the wall clock saw
        # part of the job (job 4: an extension written before its runs' telemetry was joined).
        window = (m.get("telemetry") or {}).get("window_s") or 0.0
        whole = window >= 0.95 * wall
        energy[(f["backend"], int(f["slots"]), str(f["mtp"]))] = m.get("j_per_unit") if whole else None
        print(
            f"{d.name:>3}  {f['backend']:<7} {f['slots']:>5} {str(f['mtp']):<5} {r['status']:<11}"
            f" {m.get('units_completed') or 0:>5}  {m.get('s_per_unit_throughput') or 0:>9.2f}"
            f"  {w.get('seconds') or 0:>9.1f} ({w.get('calls')})  "
            # An extended job's job_seconds is its last run's, its wall clock all runs': no launch.
            # Likewise a job finished from an interrupted pass's calls (job 10): its job_seconds
            # are the finishing call's, shorter than the pass it finished.
            + ("       -" if p.get("extended") or took < wall else f"{took - wall:>8.1f}")
        )
    print("\nVulkan / CUDA, each job's own units: seconds per unit (throughput basis); J per unit")
    for s, mtp in sorted({(k[1], k[2]) for k in walls}):
        v, c = walls.get(("vulkan", s, mtp)), walls.get(("cuda", s, mtp))
        ev, ec = energy.get(("vulkan", s, mtp)), energy.get(("cuda", s, mtp))
        if v and c:
            j = f"{ev / ec:.2f}x" if ev and ec else "n/a"
            print(f"  {s:>2} slots, MTP {mtp:<5}: {v / c:.2f}x; energy {j}")
    # Job 5 (CUDA, 2 slots, MTP off): 3 units on 2 slots, so the third ran after the first
    # two, partly alone; its span against theirs is what the slot verdict's noise sees.
    print("\nJob 5's units: first request, last response, span (s)")
    rows = [json.loads(x) for x in (RESULTS / "5" / "calls.jsonl").read_text().splitlines() if x]
    for u in sorted({r["unit"] for r in rows}):
        t0 = min(r["t_sent"] for r in rows if r["unit"] == u)
        t1 = max(r["t_done"] for r in rows if r["unit"] == u)
        print(f"  {u}: {t0:.1f} to {t1:.1f}, {t1 - t0:.1f}")
    # The jobs the race extended: each run, on the card of the jobs measured nearest in time
    # on one card alone, or of the third session's calls (machines.txt); job 4's first run's
    # telemetry was lost (see the README), so its card comes from this timing alone.
    cards = []
    for d in (p for p in RESULTS.iterdir() if p.name.isdigit()):
        r = json.loads((d / "result.json").read_text())
        devs = (r["metrics"].get("telemetry") or {}).get("devices") or []
        if len(devs) == 1 and not r["provenance"].get("extended"):
            cards.append((_t(r["provenance"]["started_utc"]), devs[0]["uuid"][:12]))
    lines = (RESULTS / "machines.txt").read_text().splitlines()
    for when, card in zip(lines[::2], lines[1::2], strict=True):
        cards.append((_t(when.split()[1]), card.split(", ")[1][:12]))
    for job in ("4", "5", "7", "14", "15"):
        rj = json.loads((RESULTS / job / "result.json").read_text())
        runs = rj["provenance"]["extended"]
        calls = [json.loads(x) for x in (RESULTS / job / "calls.jsonl").read_text().splitlines() if x]
        print(f"\nJob {job}'s runs: units, prompt and completion tokens a unit")
        for run in runs:
            cs = [c for c in calls if c["unit"] in run["units"]]
            n = len(run["units"])
            span = max(c["t_done"] for c in cs) - min(c["t_sent"] for c in cs)
            print(
                f"  {run['started_utc']}: {n} units, {sum(c['prompt_tokens'] for c in cs) / n:,.0f}"
                f" prompt, {sum(c['completion_tokens'] for c in cs) / n:,.0f} completion a unit;"
                f" first request to last response {span:.2f} s, {span / n:.2f} s a unit;"
                f" card {min(cards, key=lambda c: abs(c[0] - _t(run['started_utc'])))[1]}"
            )
        print(f"  wall_s {rj['metrics']['wall_s']:.2f} over its {len(runs)} runs")
    # The 16-slot first wave: the server's own prompt time of each of the first 16 calls.
    print("\nFirst 16 calls' prompt_ms at 16 slots, MTP off (in the order sent)")
    for job in ("2", "3"):
        cs = [json.loads(x) for x in (RESULTS / job / "calls.jsonl").read_text().splitlines() if x]
        first = sorted(cs, key=lambda c: c["t_sent"])[:16]
        print(f"  job {job}: " + ", ".join(str(round(c["timings"]["prompt_ms"])) for c in first))
    race = json.loads((RESULTS / "racing.json").read_text())
    print(
        f"\nracing.json: machine_s {race['machine_s']:.0f} s over {sum(race['launches'].values())}"
        f" launches of {sum(1 for n in race['launches'].values() if n)} jobs"
    )
    lease = sorted(RESULTS.glob("lease-*.log"))
    for log in lease:
        lines = [x for x in log.read_text().splitlines() if "call starts" in x or "call ends" in x]
        print(f"{log.name}: " + " / ".join(x.split("] ", 1)[1] for x in lines))


if __name__ == "__main__":
    main()
