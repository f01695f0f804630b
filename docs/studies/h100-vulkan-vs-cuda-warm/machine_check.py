"""The same-machine check (2026-12-06, scripts/gpu-machine-check.sh): the race's MTP-off backend
pairs at 1, 8 and 16 slots measured again on one more lent H100, on the race's own units. Prints
each point's seconds per unit on the race's machine and on the check's, and each backend ratio
on each machine, from results/ and machine-check/ alone (standard library only).
Run: python docs/studies/h100-vulkan-vs-cuda-warm/machine_check.py"""

import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
RACE = HERE / "results"
CHECK = HERE / "machine-check"


def job(folder: Path) -> dict:
    r = json.loads((folder / "result.json").read_text())
    m, t = r["metrics"], r["metrics"].get("telemetry") or {}
    calls = [json.loads(x) for x in (folder / "calls.jsonl").read_text().splitlines() if x]
    spans = {}
    for u in sorted({c["unit"] for c in calls}):
        cs = [c for c in calls if c["unit"] == u]
        spans[u] = max(c["t_done"] for c in cs) - min(c["t_sent"] for c in cs)
    return {
        "backend": r["factors"]["backend"],
        "slots": int(r["factors"]["slots"]),
        "mtp": str(r["factors"]["mtp"]),
        "spu": m["s_per_unit_throughput"],
        "jpu": m.get("j_per_unit"),
        "sm": (t.get("sm_clock_mhz") or {}).get("mean"),
        "power": (m.get("power_w") or {}).get("mean"),
        "gpu_busy": m.get("gpu_busy_share"),
        "cards": [d["uuid"][:12] for d in t.get("devices") or []],
        "units": spans,
        "extended": bool(r["provenance"].get("extended")),
    }


def main() -> None:
    race = {}
    for d in RACE.iterdir():
        if d.name.isdigit():
            j = job(d)
            race[(j["backend"], j["slots"], j["mtp"])] = (d.name, j)
    check = {}
    for d in sorted(CHECK.glob("slots-*/[0-9]*")):
        j = job(d)
        check[(j["backend"], j["slots"], j["mtp"])] = (f"{d.parent.name}/{d.name}", j)
    print("point            race job (card)            s/unit  | check job (card)             s/unit | check/race  same units  SM MHz race, check")
    for key in sorted(check, key=lambda k: (k[1], k[0])):
        cname, c = check[key]
        rname, r = race[key]
        same = set(c["units"]) == set(r["units"])
        print(
            f"{key[0]:<6} {key[1]:>2} slots  job {rname:>2} ({','.join(r['cards'])})  {r['spu']:6.2f}"
            f"  | {cname:<10} ({','.join(c['cards'])})  {c['spu']:6.2f} | {c['spu'] / r['spu']:6.2f}x"
            f"  {str(same):<5} {len(c['units']):>3}  {r['sm'] or 0:6.0f}, {c['sm'] or 0:6.0f}"
        )
    print("\nPer unit at 1 slot (units run one after another): check span / race span")
    for b in ("vulkan", "cuda"):
        r, c = race[(b, 1, "False")][1], check[(b, 1, "False")][1]
        ratios = [c["units"][u] / r["units"][u] for u in sorted(c["units"]) if u in r["units"]]
        print(f"  {b}: " + ", ".join(f"{x:.2f}x" for x in ratios))
    print("\nVulkan / CUDA seconds per unit (throughput basis), MTP off")
    for s in sorted({k[1] for k in check}):
        cv, cc = check[("vulkan", s, "False")][1], check[("cuda", s, "False")][1]
        rv, rc = race[("vulkan", s, "False")][1], race[("cuda", s, "False")][1]
        print(
            f"  {s:>2} slots: check machine {cv['spu'] / cc['spu']:.2f}x;"
            f" race {rv['spu'] / rc['spu']:.2f}x (Vulkan on {','.join(rv['cards'])}, CUDA on {','.join(rc['cards'])})"
        )
    ratios = [check[k][1]["spu"] / race[k][1]["spu"] for k in check if race[k][1]["cards"] == ["GPU-3d382b62"]]
    print(f"\nCheck machine against the race's first machine (GPU-3d382b62), {len(ratios)} points:"
          f" {min(ratios):.2f}x to {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
