"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ alone (standard library only). Run: python docs/studies/h200-qwen3-30b-a3b/figures_check.py"""

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
    total, active, _ = param_counts(r)
    bench = json.loads((RESULTS / "ground-truth" / "llama-bench.json").read_text())
    print("== model (results/0/.hydra/config.yaml, shapes as benchkit writes them)")
    print(f"arch {r['arch']}, {r['n_layers']} layers, d_model {r['d_model']}, {r['n_experts']} experts / {r['n_experts_used']} used, "
          f"expert width {r['expert_ff']}, vocabulary {r['n_vocab']:,}")
    print(f"parameters: total {total:,} (llama-bench model_n_params {bench[0]['model_n_params']:,}), "
          f"active {active:,} ({active / 1e9:.2f}B)")
    print("\n== roofline inputs (the report's formula: bits = 8 x file bytes / total; GB = active x bits / 8)")
    res0 = all_jobs[0][1]
    model, bw = res0["provenance"]["model"], res0["provenance"]["hardware"]["bandwidth_gbs"]
    size = model["file_bytes"]
    bits_cfg = 8 * size / (model["params_total_b"] * 1e9)
    gb_cfg = model["params_active_b"] * bits_cfg / 8
    print(f"file {size:,} bytes; configured {model['params_total_b']}B total / {model['params_active_b']}B active "
          f"(what the report uses): {bits_cfg:.2f} bits/weight, {gb_cfg:.2f} GB per token, weights-only ceiling {bw / gb_cfg:,.0f} tok/s")
    print(f"the same bits x {active / 1e9:.2f}B active: {active / 1e9 * bits_cfg / 8:.2f} GB per token")
    bits_x = 8 * size / total
    print(f"exact counts: {bits_x:.2f} bits/weight x {active / 1e9:.2f}B = {active * bits_x / 8 / 1e9:.2f} GB per token")
    tg = [b for b in bench if b["n_gen"] > 0][0]
    print(f"llama-bench tg64 {tg['avg_ts']:.1f} tok/s = {tg['avg_ts'] / (bw / gb_cfg):.1%} of the weights-only ceiling (the report's before rules v14)")
    # Since rules v14 the report's ceiling counts the KV cache one sequence reads at the mean
    # context of a decode step too (benchkit/report/analysis/kv_read.py: a call of p prompt and n
    # generated tokens has n - 1 decode steps, the i-th over p + i positions), f16 keys and values.
    c0 = all_jobs[0][2]
    steps = sum(c["completion_tokens"] - 1 for c in c0 if c["completion_tokens"] > 1)
    pos = sum((c["completion_tokens"] - 1) * (c["prompt_tokens"] + c["completion_tokens"] / 2)
              for c in c0 if c["completion_tokens"] > 1)
    ctx = pos / steps
    kv_gb = r["n_layers"] * r["n_kv_heads"] * r["head_dim"] * 2 * 2 * ctx / 1e9
    ceil_kv = bw / (gb_cfg + kv_gb)
    print(f"with the KV cache (job 0's mean decode context {ctx:,.0f} positions, f16: {kv_gb:.3f} GB a token): "
          f"ceiling {ceil_kv:,.0f} tok/s; llama-bench tg64 {tg['avg_ts']:.1f} tok/s = {tg['avg_ts'] / ceil_kv:.1%} of it "
          f"(tg64 decodes from an empty context, so this ceiling's KV term is larger than tg64's)")
    print("\n== workload as replayed (job 0's calls)")
    calls = all_jobs[0][2]
    units = {}
    for c in calls:
        units[c["unit"]] = units.get(c["unit"], 0) + 1
    prompts = [c["fixture_prompt_tokens"] for c in calls]
    print(f"{len(units)} units, {len(calls)} calls, calls per unit {rng(list(units.values()))}, "
          f"prompt tokens per call {rng(prompts)}")
    print("\n== per job: where it was measured")
    for n, res, _ in all_jobs:
        p = res["provenance"]
        print(f"job {n}: {res['factors']['slots']} slots, alias {p['server']['alias']}, "
              f"reused_from {p.get('reused_from')}, measured {p.get('measured_utc') or p['started_utc']}, "
              f"capped calls {res['metrics']['calls_hit_cap']}, {res['metrics']['cap_time_share']:.1%} of call time")
    bw = all_jobs[0][1]["provenance"]["hardware"]["bandwidth_gbs"]
    print(f"\nhardware profile bandwidth: {bw:,.0f} GB/s = {bw / 1000:.1f} TB/s")
    print("\n== ground truth")
    for f in sorted((RESULTS / "ground-truth").glob("batched-bench*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        print(f"{f.name}: npp {rows[0]['pp']}, ntg {rows[0]['tg']}, batches {[x['pl'] for x in rows]}")
    for line in (RESULTS / "ground-truth" / "machine.txt").read_text().splitlines():
        if line.startswith(("build_s", "model_s")):
            print("machine.txt:", line)


main()
