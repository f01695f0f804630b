"""The drift probe: after a job's timed replay, the same server answers a fixed probe set, so
the report can say whether the job's setting changes what the model says.

Each probe is a stretch of a workload call's prompt, tokenized as the server tokenizes it:
its first tokens are the probe's prompt, the next `quality.tokens` its forced continuation.
With `quality.probe_source=task` the probes are the scored task's items instead (real
questions whose answers the task checks): each item's prompt, and as the forced continuation
its `answer` (a right answer written out; an exact or number item without one, its
`expected`), at most `quality.tokens` of it; `quality.tokens` are generated greedily whatever
the answer's length.
Two things are asked of the server for each probe:

- **greedy**: the prompt, `quality.tokens` tokens generated greedily (temperature 0, EOS
  ignored, so the length is fixed). Two settings that change no answer give the same tokens;
  greedy speculative decoding must.
- **forced**: for each position of the forced continuation, the prompt plus the continuation
  up to it, one token asked with `n_probs`: the model's top-k next-token log-probabilities
  there. Every job of the same model and workload is asked at the same positions, whatever it
  generated itself, so two jobs' distributions can be compared token for token (KL
  divergence, top-1 agreement), and the reference need not be measured first.

llama-server facts this relies on (b11434, tools/server/server-context.cpp): `n_probs` gives the
softmax of the raw logits, before any sampler (post_sampling_probs=false); a token whose text
ends in an incomplete UTF-8 character gets no probabilities (process_token adds it only when
the text is whole), so the forced requests carry a grammar that lets only printable ASCII be
*sampled*; the grammar never touches the reported distribution, and the sampled token is
thrown away. A position that still comes back without probabilities is counted as missing.

The probes run `slots` at a time, each worker on its own slot (`id_slot`, `cache_prompt`: the
prefix is reused, one new token per forced request), so the server batches them as the job's
setting batches real work. The probe runs after the timed replay and never enters its figures.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import httpx

from benchkit.errors import UserError
from benchkit.quality.task import Task
from benchkit.quality.workers import each_group
from benchkit.workload.model import Call, Workload, token_ids

QUALITY_FILE = "quality.jsonl"
# Printable ASCII only may be sampled (see the module docstring); never the reported probs.
ASCII_GRAMMAR = "root ::= [ -~]"


class ProbeOutcome(TypedDict):
    """What one probe run did (result.json's `quality` block, with the settings)."""

    file: str
    source: str
    probes: int
    positions: int
    positions_missing: int
    errors: int
    first_error: str | None
    seconds: float


class ProbeRecord(TypedDict):
    """One probe's line in quality.jsonl."""

    probe: int
    unit: str
    seq: int
    prompt_tokens: int
    forced: list[int]
    greedy: list[int]
    # Per forced position: the top-k [token id, natural-log probability], best first; [] when
    # the server gave none there.
    top: list[list[list[float]]]
    error: str | None


@dataclass(frozen=True)
class ProbeSet:
    """The probes of one job: prompts and forced continuations, as token ids."""

    items: tuple[tuple[Call, list[int], list[int]], ...]
    # Tokens generated greedily per probe; None: as many as its forced continuation.
    greedy_tokens: int | None = None
    # Where the prompts came from, for result.json: "workload" or "task <file name>".
    source: str = "workload"


def _text_of(call: Call) -> str:
    if call.messages is not None:
        return "\n".join(str(m.get("content", "")) for m in call.messages)
    return call.text or ""


def probe_set(
    workload: Workload,
    tokenize: Callable[[str], list[int]],
    n_vocab: int,
    prompts: int,
    tokens: int,
    prompt_tokens: int,
    seed: int,
) -> ProbeSet:
    """`prompts` calls drawn from the workload with `seed`, each cut into a prompt of at most
    `prompt_tokens` tokens and a forced continuation of `tokens`; calls too short are passed
    over. The same workload, seed and tokenizer give the same probes in every job."""
    calls = list(workload.calls)
    random.Random(seed).shuffle(calls)
    items: list[tuple[Call, list[int], list[int]]] = []
    for call in calls:
        if len(items) == prompts:
            break
        ids = token_ids(call, n_vocab) if call.segments is not None else tokenize(_text_of(call))
        if len(ids) < tokens + 4:
            continue
        head = min(prompt_tokens, len(ids) - tokens)
        items.append((call, ids[:head], ids[head : head + tokens]))
    return ProbeSet(tuple(items))


def task_probe_set(
    task: Task, tokenize: Callable[[str], list[int]], prompts: int, tokens: int
) -> ProbeSet:
    """The first `prompts` items of the task as probes (module docstring): prompt, and a right
    answer as the forced continuation. A regex item without an `answer` has no right answer to
    force and is passed over."""
    items: list[tuple[Call, list[int], list[int]]] = []
    for i, item in enumerate(task.items):
        if len(items) == prompts:
            break
        answer = item.answer
        if answer is None and item.scorer in ("exact", "number"):
            answer = " " + str(item.expected)
        forced = tokenize(answer)[:tokens] if answer else []
        if not forced:
            continue
        call = Call(
            unit=f"task:{i + 1}",
            seq=0,
            role="task",
            segments=None,
            text=item.prompt,
            messages=None,
            max_tokens=tokens,
            completion_tokens=len(forced),
            recorded_prompt_tokens=None,
            line=i + 1,
        )
        items.append((call, tokenize(item.prompt), forced))
    return ProbeSet(tuple(items), greedy_tokens=tokens, source=f"task {task.path.name}")


def check_source(source: str, task: Task | None) -> None:
    """quality.probe_source=task needs a task whose items can be forced; one sentence if not."""
    if source != "task":
        return
    if task is None:
        raise UserError(
            "quality.probe_source=task takes the probe's prompts from the scored task, but "
            "quality.task is empty; name a task file (quality.task=qa) or set "
            "quality.probe_source=workload."
        )
    if not any(i.answer or i.scorer in ("exact", "number") for i in task.items):
        raise UserError(
            f"quality.probe_source=task: no item of {task.path} has a right answer to force "
            "(an `answer`, or an exact or number `expected`); add `answer:` to its items."
        )


class ProbeClient:
    """The probe's requests to one server (llama-server's /completion)."""

    def __init__(self, base_url: str, headers: Mapping[str, str], top_k: int, timeout_s: float):
        self.http = httpx.Client(base_url=base_url, headers=dict(headers), timeout=timeout_s)
        self.top_k = top_k

    def close(self) -> None:
        self.http.close()

    def tokenize(self, text: str) -> list[int]:
        r = self.http.post("/tokenize", json={"content": text, "add_special": False})
        r.raise_for_status()
        return [int(t) for t in r.json()["tokens"]]

    def _complete(self, body: dict[str, object]) -> dict[str, object]:
        base: dict[str, object] = {
            "temperature": 0.0,
            "samplers": ["temperature"],
            "cache_prompt": True,
            "return_tokens": True,
            "stream": False,
        }
        r = self.http.post("/completion", json={**base, **body})
        r.raise_for_status()
        data = r.json()
        return data if isinstance(data, dict) else {}

    def greedy(self, prompt: Sequence[int], n: int, slot: int) -> list[int]:
        data = self._complete(
            {"prompt": list(prompt), "n_predict": n, "ignore_eos": True, "id_slot": slot}
        )
        return [int(t) for t in data.get("tokens") or []]  # type: ignore[attr-defined]

    def next_token(self, prompt: Sequence[int], slot: int) -> list[list[float]]:
        data = self._complete(
            {
                "prompt": list(prompt),
                "n_predict": 1,
                "n_probs": self.top_k,
                "grammar": ASCII_GRAMMAR,
                "id_slot": slot,
            }
        )
        probs = data.get("completion_probabilities") or []
        if not isinstance(probs, list) or not probs:
            return []
        top = probs[0].get("top_logprobs") or []
        return [[int(t["id"]), float(t["logprob"])] for t in top]


def run_probe(
    client: ProbeClient,
    probes: ProbeSet,
    slots: int,
    out: Path,
    progress: Callable[[int, int], None] | None = None,
) -> ProbeOutcome:
    """Ask every probe of `probes`, `slots` at a time, and write quality.jsonl to `out`;
    what it did, for result.json's `quality.probe` block."""
    t0 = time.perf_counter()
    done = [0]

    def one(i: int) -> ProbeRecord:
        call, prompt, forced = probes.items[i]
        slot = i % max(1, slots)
        rec: ProbeRecord = {
            "probe": i,
            "unit": call.unit,
            "seq": call.seq,
            "prompt_tokens": len(prompt),
            "forced": forced,
            "greedy": [],
            "top": [],
            "error": None,
        }
        try:
            rec["greedy"] = client.greedy(prompt, probes.greedy_tokens or len(forced), slot)
            rec["top"] = [
                client.next_token([*prompt, *forced[:j]], slot) for j in range(len(forced))
            ]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            rec["error"] = f"{type(exc).__name__}: {exc}"
        done[0] += 1
        if progress is not None:
            progress(done[0], len(probes.items))
        return rec

    # Worker w sends probes w, w+slots, ... in turn: each keeps to its own slot, so the
    # server's prefix cache holds that probe's prompt while its positions are asked.
    groups = [list(range(w, len(probes.items), max(1, slots))) for w in range(max(1, slots))]
    records = sorted(each_group(one, groups), key=lambda r: r["probe"])
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    tmp.replace(out)
    positions = sum(len(r["forced"]) for r in records)
    missing = sum(1 for r in records for t in r["top"] if not t) + sum(
        len(r["forced"]) for r in records if r["error"]
    )
    errors = [r["error"] for r in records if r["error"]]
    return {
        "file": out.name,
        "source": probes.source,
        "probes": len(records),
        "positions": positions,
        "positions_missing": missing,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "seconds": round(time.perf_counter() - t0, 3),
    }
