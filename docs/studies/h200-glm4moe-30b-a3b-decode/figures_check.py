"""Numbers the README quotes that are not verbatim in the generated report, computed from
results/ alone (standard library only). Run: python docs/studies/h200-glm4moe-30b-a3b-decode/figures_check.py"""

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
    bench = json.loads((RESULTS / "ground-truth" / "llama-bench.json").read_text())
    print("== model (results/0/.hydra/config.yaml, shapes as benchkit writes them)")
    print(f"arch {r['arch']}, {r['n_layers']} layers, d_model {r['d_model']}, {r['n_experts']} experts / {r['n_experts_used']} used, "
          f"expert width {r['expert_ff']}, shared experts {r['n_shared_experts']}, NextN blocks {r['nextn_layers']}, vocabulary {r['n_vocab']:,}")
    print(f"parameters: total {total:,} (llama-bench model_n_params {bench[0]['model_n_params']:,}), "
          f"active {active:,} ({active / 1e9:.2f}B), of which shared expert {shared:,} ({shared / 1e9:.2f}B)")
    print("\n== workload as replayed (job 0's calls)")
    _, _, calls = all_jobs[0]
    units = {}
    for c in calls:
        units[c["unit"]] = units.get(c["unit"], 0) + 1
    prompts = [c["fixture_prompt_tokens"] for c in calls]
    outs = [c["fixture_completion_tokens"] for c in calls]
    print(f"{len(units)} units, {len(calls)} calls, calls per unit {rng(list(units.values()))}")
    print(f"prompt tokens per call {rng(prompts)} (mean {sum(prompts) / len(prompts):,.0f}); "
          f"completion tokens per call {rng(outs)} (mean {sum(outs) / len(outs):,.0f})")
    print("\n== per job: wall clock, the server's own prompt time, output tok/s")
    out = {}
    for n, res, _ in all_jobs:
        m, f = res["metrics"], res["factors"]
        ps = m["server"]["prompt_seconds"]
        out[(f["slots"], f["sampling"])] = m["output_tok_s"]
        print(f"job {n}: {f['slots']} slots, {f['sampling']}: wall {m['wall_s']:.1f} s, server prompt_seconds "
              f"{ps:.1f} s ({ps / m['wall_s']:.0%} of the wall clock), output {m['output_tok_s']:.1f} tok/s, "
              f"calls hit cap {m['calls_hit_cap']}")
    for s in ("greedy", "qwen-recommended"):
        print(f"output tok/s, 16 slots / 1 slot, {s}: {out[(16, s)] / out[(1, s)]:.2f}x")
    print("\n== ground truth")
    for f in sorted((RESULTS / "ground-truth").glob("batched-bench*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        print(f"{f.name}: npp {rows[0]['pp']}, ntg {rows[0]['tg']}, batches {[x['pl'] for x in rows]}")
        pp = ", ".join(f"{x['pl']}: {x['speed_pp']:,.0f}" for x in rows)
        print(f"  prompt tok/s per batch: {pp}")
    for line in (RESULTS / "ground-truth" / "machine.txt").read_text().splitlines():
        if line.startswith(("build_s", "model_s")):
            print("machine.txt:", line)


main()
