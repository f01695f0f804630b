"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ alone (standard library only). Run: python docs/studies/h200-vulkan-vs-cuda/figures_check.py"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def jobs():
    """Every job folder's result.json and calls, in job order."""
    out = []
    for d in sorted((p for p in RESULTS.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
        result = json.loads((d / "result.json").read_text())
        calls_file = d / "calls.jsonl"
        calls = [json.loads(x) for x in calls_file.read_text().splitlines() if x.strip()] if calls_file.exists() else []
        out.append((int(d.name), result, calls))
    return out


def synthetic_recipe(job_dir):
    """The model's synthetic recipe from the job's .hydra/config.yaml (model: synthetic: key: value)."""
    recipe, inside = {}, False
    for line in (job_dir / ".hydra" / "config.yaml").read_text().splitlines():
        if line == "  synthetic:":
            inside = True
        elif inside and line.startswith("    ") and ":" in line:
            key, value = line.strip().split(":", 1)
            value = value.strip()
            recipe[key] = int(value) if value.lstrip("-").isdigit() else value
        elif inside:
            break
    return recipe


def param_counts(r):
    """(total, active, shared-expert) parameters from the tensor shapes benchkit writes for the
    recipe (benchkit/models/synthetic.py): active counts every non-expert tensor, embeddings and
    output included, plus n_experts_used of n_experts; a NextN block counts in the total only."""
    d, e, ff, used, v = r["d_model"], r["n_experts"], r["expert_ff"], r["n_experts_used"], r["n_vocab"]
    q, kv = r["n_heads"] * r["head_dim"], r["n_kv_heads"] * r["head_dim"]
    attn = 2 * q * d + 2 * kv * d
    experts_all, experts_used = 3 * e * ff * d, 3 * used * ff * d
    outer = v * d + d + v * d  # token embedding, output norm, output
    if r["arch"] == "qwen3moe":
        block = d + attn + 2 * r["head_dim"] + d + e * d
        n = r["n_layers"]
        return outer + n * (block + experts_all), outer + n * (block + experts_used), 0
    shared = 3 * ff * r["n_shared_experts"] * d
    block = d + attn + (q + 2 * kv) + d + e * d + e + shared
    n, nextn = r["n_layers"], r["nextn_layers"]
    nextn_extra = 2 * d * d + 2 * d
    total = outer + (n + nextn) * (block + experts_all) + nextn * nextn_extra
    return total, outer + n * (block + experts_used), n * shared


def rng(values):
    return f"{min(values):,}-{max(values):,}"


def main():
    all_jobs = jobs()
    r = synthetic_recipe(RESULTS / "0")
    total, active, shared = param_counts(r)
    print("== model (results/0/.hydra/config.yaml, shapes as benchkit writes them)")
    print(f"arch {r['arch']}, vocabulary {r['n_vocab']:,}, shared experts {r['n_shared_experts']}, NextN blocks {r['nextn_layers']}; "
          f"parameters total {total:,}, active {active:,} ({active / 1e9:.2f}B)")
    print("\n== workload as replayed (job 0's calls)")
    calls = all_jobs[0][2]
    units = {}
    for c in calls:
        units[c["unit"]] = units.get(c["unit"], 0) + 1
    prompts = [c["fixture_prompt_tokens"] for c in calls]
    print(f"{len(units)} units, {len(calls)} calls, prompt tokens per call {rng(prompts)}")
    print("\n== per job: telemetry beyond the report's table")
    for n, res, _ in all_jobs:
        f, m, p = res["factors"], res["metrics"], res["provenance"]
        head = f"job {n}: {f['backend']}, {f['slots']} slots, MTP {'on' if f['mtp'] else 'off'}, {res['status']}"
        t = m.get("telemetry")
        if not t:
            print(f"{head} (reason {res['reason']!r}, job_seconds {p['job_seconds']}, calls {len(_)})")
            continue
        print(f"{head}: SM clock mean {t['sm_clock_mhz']['mean']:,.0f} MHz, sampler {t['sampler_cpu_share']:.2%} of a core, "
              f"late ticks {t['sampler_late_ticks']}, interval {t['interval_s']} s, server prompt_seconds {m['server']['prompt_seconds']:.1f} s of wall {m['wall_s']:.1f} s")
    print("\n== job 9 (incomplete): what its folder holds")
    d = RESULTS / "9"
    for line in (d / "benchkit.log").read_text().splitlines():
        print("benchkit.log:", line)
    print("server.log, last line:", (d / "server.log").read_text().splitlines()[-1])
    print("calls.jsonl lines:", len([x for x in (d / "calls.jsonl").read_text().splitlines() if x.strip()]))
    print("\n== ground truth: llama-batched-bench decode (tg) tok/s per batch")
    for b in ("cuda", "vulkan"):
        rows = [json.loads(x) for x in (RESULTS / "ground-truth" / b / "batched-bench.jsonl").read_text().splitlines() if x.strip()]
        print(f"{b}: npp {rows[0]['pp']}, ntg {rows[0]['tg']}: " + ", ".join(f"batch {x['pl']} {x['speed_tg']:,.0f}" for x in rows))

    print("\n== job 0's first call (the cold start): telemetry samples between its request and its first token")
    c0 = json.loads((RESULTS / "0" / "calls.jsonl").read_text().splitlines()[0])
    tel = [json.loads(x) for x in (RESULTS / "0" / "telemetry.jsonl").read_text().splitlines() if x.strip()]
    win = [x for x in tel if c0["t_sent"] <= x["t"] <= c0["t_first"]]
    idle = sum(1 for x in win if x["sm_clock_mhz"] <= 345)
    print(f"  time to first token {c0['t_first'] - c0['t_sent']:.2f} s; {len(win)} samples, {idle} at the idle"
          f" SM clock (345 MHz or less); mean power {sum(x['power_w'] for x in win) / len(win):.0f} W,"
          f" mean GPU busy {sum(x['gpu_util'] for x in win) / len(win):.0f}%")
    print("\n== each Vulkan job's first calls: time to first token (s)")
    for n in ("0", "1", "2", "3", "8"):
        cs = [json.loads(x) for x in (RESULTS / n / "calls.jsonl").read_text().splitlines() if x.strip()]
        print(f"  job {n}: " + ", ".join(f"{c['unit']}/{c['seq']} {c['t_first'] - c['t_sent']:.2f}" for c in cs[:4]))

    # The report (rules v7) leaves the cold starts out of J/unit too. Each Vulkan job's J/unit as
    # measured (result.json), and for job 3 (8 slots, six overlapping cold starts) the GPU energy over
    # the whole window its first calls ran in: leaving its cold starts out cannot remove more than
    # that, so the report's J/unit for job 3 must not fall below the last figure printed here.
    print("\n== J per unit as measured (energy_j / units, result.json), Vulkan MTP off")
    for n, res, _ in all_jobs:
        m = res["metrics"]
        if res["factors"]["backend"] == "vulkan" and not res["factors"]["mtp"] and m.get("energy_j"):
            print(f"  job {n}: {m['energy_j'] / m['units_completed']:,.0f} J per unit ({m['energy_j']:,.0f} J, {m['units_completed']} units)")
    print("\n== job 3: GPU energy from the first request to the last token of the calls sent before its first call completed")
    _, r3, c3 = all_jobs[3]
    first_done = min(c["t_done"] for c in c3)
    wave = [c for c in c3 if c["t_sent"] < first_done]
    a, b = min(c["t_sent"] for c in wave), max(c["t_last"] for c in wave)
    tel3 = [json.loads(x) for x in (RESULTS / "3" / "telemetry.jsonl").read_text().splitlines() if x.strip()]
    win3 = [x for x in tel3 if a <= x["t"] <= b]
    watts = sum(x["power_w"] for x in win3) / len(win3)
    units3 = r3["metrics"]["units_completed"]
    joules = watts * (b - a)
    measured = r3["metrics"]["energy_j"] / units3
    print(f"  {len(wave)} calls ({', '.join(sorted(c['unit'] + '/' + str(c['seq']) for c in wave))}), {a:.2f}-{b:.2f} s,"
          f" {b - a:.1f} s; {len(win3)} samples, mean power {watts:.0f} W: {joules:,.0f} J, {joules / units3:.0f} J per unit")
    print(f"  as measured {measured:,.0f} J per unit; less all of that window's energy: {measured - joules / units3:,.0f} J per unit")
    print("\n== job 3's first wave: each call's decoding, and how much of it other calls' prompts covered (rules v12)")
    prompts = sorted((c["t_first"] - c["timings"]["prompt_ms"] / 1000, c["t_first"]) for c in c3 if c["timings"].get("prompt_ms"))
    for c in sorted(wave, key=lambda c: c["unit"]):
        s0, e0 = c["t_first"], c["t_last"]
        covered, reach = 0.0, s0
        for ps, pe in prompts:  # the union of the prompt windows inside [s0, e0]
            lo, hi = max(ps, reach), min(pe, e0)
            if hi > lo:
                covered += hi - lo
                reach = hi
        print(f"  {c['unit']}: prompt {c['timings']['prompt_ms'] / 1000:.2f} s, decode of {c['timings']['predicted_n']} tokens"
              f" {e0 - s0:.2f} s, of which other prompts {covered:.2f} s")


    # The 1-slot backend pair (job 0 Vulkan, job 4 CUDA) on whole units. "all units" is the pair
    # as measured, cold start kept (the report's "as measured ... 1.61x"). "u000 dropped" is the
    # figure of a first v14 rule that left a cold start's whole unit out of every pair; that rule
    # was reverted (review 12), and the report now pairs u000 less the cold start's excess (1.27x),
    # so 1.17x is printed only to show what the reverted rule gave. A unit's time is its span in
    # calls.jsonl (first request to last response), scaled so a job's spans add up to its wall_s
    # (the throughput basis, benchkit.racing.observe); the ratio is of the two means.
    print("\n== 1 slot, MTP off: Vulkan (job 0) against CUDA (job 4), per-unit seconds (throughput basis)")

    def per_unit(n):
        res = json.loads((RESULTS / n / "result.json").read_text())
        spans = {}
        for line in (RESULTS / n / "calls.jsonl").read_text().splitlines():
            if line.strip():
                c = json.loads(line)
                a, b = spans.get(c["unit"], (c["t_sent"], c["t_done"]))
                spans[c["unit"]] = (min(a, c["t_sent"]), max(b, c["t_done"]))
        spans = {u: b - a for u, (a, b) in spans.items()}
        total = sum(spans.values())
        return {u: s * res["metrics"]["wall_s"] / total for u, s in spans.items()}

    vk, cu = per_unit("0"), per_unit("4")
    for label, units in (("all units", sorted(vk)), ("u000 dropped (reverted rule, not the report's figure)", [u for u in sorted(vk) if u != "u000"])):
        v, c = sum(vk[u] for u in units) / len(units), sum(cu[u] for u in units) / len(units)
        print(f"  {label} ({units[0]}-{units[-1]}, {len(units)} units): {v:.1f} s against {c:.1f} s a unit, {v / c:.2f}x")


main()
