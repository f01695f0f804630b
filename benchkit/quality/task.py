"""The optional scored task (`quality.task`): prompts with expected answers, loaded and checked
before a job measures anything, answered greedily by the job's server after its timed replay
and drift probe, scored, and summed up as an accuracy with a Wilson 95% interval.

A task file is YAML, a list of items:

    - prompt: "2 + 3 ="
      expected: 5
      scorer: number        # exact | regex | number
      tolerance: 0.5        # number only; else quality.task_abs_tol / task_rel_tol
      answer: " 5"          # optional: a right answer written out, which the drift probe
                            # forces where its prompts are the task's (quality.probe_source=task)

`exact` compares the answer's first non-empty line with `expected`, both stripped (the server
generates `quality.task_tokens` tokens, so a model that goes on after its answer still
matches); `regex` searches the whole answer for the pattern `expected`; `number` takes the
first number in the answer and accepts it within max(tolerance, rel_tol x |expected|).
`quality.task_scorer=module:function` (or `path/to/file.py:function`) scores every item
instead: `function(answer, item)` returns True when the answer is right.

Every mistake in the file or the scorer is found here, before the server starts, as one
sentence naming the file, the item and the fix (benchkit.errors.UserError).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import httpx
import yaml

from benchkit.errors import UserError
from benchkit.paths import data_root
from benchkit.quality.workers import each_group

TASK_FILE = "task.jsonl"
SCORERS = ("exact", "regex", "number")
ITEM_KEYS = frozenset({"prompt", "expected", "scorer", "tolerance", "answer"})
# The two-sided 95% normal quantile.
Z95 = 1.959963984540054
# A number as a model writes one: sign, thousands commas, decimals, exponent.
NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


def tasks_dir() -> Path:
    """The bundled task files, by name (`quality.task=arith`)."""
    return data_root() / "fixtures" / "tasks"


@dataclass(frozen=True)
class TaskItem:
    """One prompt, its expected answer and how it is scored."""

    prompt: str
    expected: Any
    scorer: str  # exact | regex | number | custom
    tolerance: float | None = None
    # A right answer written out, as the model would continue the prompt: the continuation
    # the drift probe forces where its prompts are the task's (quality.probe_source=task).
    answer: str | None = None


# A custom scorer: (answer, item) -> True when the answer is right.
Scorer = Callable[[str, TaskItem], object]


@dataclass(frozen=True)
class Task:
    """A loaded, checked task file and the scorer settings it is scored with."""

    path: Path
    sha256: str
    items: tuple[TaskItem, ...]
    abs_tol: float
    rel_tol: float
    custom: Scorer | None = None
    custom_name: str | None = None


class TaskBlock(TypedDict, total=False):
    """result.json's `task`: what the scored task gave (schema.TaskInfo)."""

    file: str
    task: str
    task_sha256: str
    scorer: str | None
    items: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    errors: int
    first_error: str | None
    tokens: int
    seconds: float
    skipped: str


def resolve_task_path(spec: str) -> Path:
    """The task file `spec` names: a path (from the working folder, else the bundled data),
    or a bundled task's name (`arith`)."""
    p = Path(spec).expanduser()
    if p.is_file():
        return p
    if "/" not in spec and "\\" not in spec:
        for name in (spec, f"{spec}.yaml", f"{spec}.yml"):
            if (tasks_dir() / name).is_file():
                return tasks_dir() / name
    if not p.is_absolute() and (data_root() / p).is_file():
        return data_root() / p
    bundled = sorted(x.stem for x in tasks_dir().glob("*.yaml")) if tasks_dir().is_dir() else []
    raise UserError(
        f"quality.task={spec}: no such task file; give the path of a YAML task file or the "
        f"name of a bundled one ({', '.join(bundled) or 'none'})."
    )


def _item(path: Path, i: int, raw: object, custom: bool) -> TaskItem:
    """Item `i` (1-based) of the file, checked."""
    where = f"{path}: item {i}"
    if not isinstance(raw, Mapping):
        raise UserError(f"{where} is not a mapping; write it as {{prompt: ..., expected: ...}}.")
    unknown = sorted(str(k) for k in raw if k not in ITEM_KEYS)
    if unknown:
        raise UserError(
            f"{where} has unknown key(s) {', '.join(unknown)}; an item takes "
            f"{', '.join(sorted(ITEM_KEYS))} only."
        )
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UserError(f"{where} has no prompt; give it a non-empty `prompt` string.")
    if "expected" not in raw or raw["expected"] is None:
        raise UserError(f"{where} has no expected answer; give it an `expected` value.")
    expected = raw["expected"]
    scorer = raw.get("scorer")
    if scorer is None and custom:
        scorer = "custom"
    elif scorer is None:
        raise UserError(
            f"{where} has no scorer; add `scorer:` {', '.join(SCORERS)} (or set "
            "quality.task_scorer=module:function to score every item yourself)."
        )
    elif scorer not in SCORERS:
        raise UserError(
            f"{where} has scorer {scorer!r}; use one of {', '.join(SCORERS)} (or set "
            "quality.task_scorer=module:function to score every item yourself)."
        )
    tolerance = raw.get("tolerance")
    if tolerance is not None:
        if scorer != "number":
            raise UserError(f"{where}: `tolerance` applies to scorer number only; remove it.")
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
            raise UserError(f"{where}: tolerance {tolerance!r} must be a number >= 0.")
        tolerance = float(tolerance)
    if scorer == "number" and _as_number(expected) is None:
        raise UserError(f"{where}: expected {expected!r} is not a number, as scorer number needs.")
    if scorer == "regex":
        try:
            re.compile(str(expected))
        except re.error as exc:
            raise UserError(
                f"{where}: expected {expected!r} is not a valid regular expression ({exc}); "
                "fix the pattern."
            ) from None
    answer = raw.get("answer")
    if answer is not None and (not isinstance(answer, str) or not answer.strip()):
        raise UserError(
            f"{where}: `answer` must be a non-empty string (a right answer written out)."
        )
    return TaskItem(
        prompt=prompt, expected=expected, scorer=str(scorer), tolerance=tolerance, answer=answer
    )


def load_scorer(spec: str) -> Scorer:
    """`module:function` or `path/to/file.py:function`, imported and checked to take
    (answer, item)."""
    mod_name, sep, func_name = spec.rpartition(":")
    if not sep or not mod_name or not func_name:
        raise UserError(
            f"quality.task_scorer={spec}: expected module:function or path/to/file.py:function."
        )
    try:
        if mod_name.endswith(".py"):
            file = Path(mod_name).expanduser()
            if not file.is_file():
                raise UserError(
                    f"quality.task_scorer={spec}: {file} does not exist; give the path of the "
                    "scorer's Python file."
                )
            digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
            name = f"benchkit_task_scorer_{digest}"
            loader = importlib.util.spec_from_file_location(name, file)
            if loader is None or loader.loader is None:
                raise ImportError(f"cannot load {file}")
            module = importlib.util.module_from_spec(loader)
            sys.modules[name] = module
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except UserError:
        raise
    except Exception as exc:  # any import-time failure of the user's code is the user's to fix
        raise UserError(
            f"quality.task_scorer={spec}: cannot import {mod_name} ({type(exc).__name__}: "
            f"{exc}); make it importable from where benchkit runs or give a file path."
        ) from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise UserError(
            f"quality.task_scorer={spec}: {mod_name} has no function {func_name}; name an "
            "existing function."
        )
    try:
        inspect.signature(fn).bind("answer", None)
    except TypeError:
        raise UserError(
            f"quality.task_scorer={spec}: {func_name} must take two arguments (answer, item)."
        ) from None
    except ValueError:
        pass  # a builtin without a signature: it is called as it is
    return fn  # type: ignore[no-any-return]


def load_task(
    spec: str, scorer: str | None = None, abs_tol: float = 0.0, rel_tol: float = 0.0
) -> Task:
    """The task file `spec` names, every item checked, with its scorer settings."""
    if abs_tol < 0 or rel_tol < 0:
        raise UserError(
            f"quality.task_abs_tol={abs_tol} / task_rel_tol={rel_tol}: tolerances must be >= 0."
        )
    path = resolve_task_path(spec)
    custom = load_scorer(scorer) if scorer else None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path} cannot be read ({exc.strerror}); check the file.") from None
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path} is not valid UTF-8 YAML ({first}); fix the file.") from None
    if not isinstance(data, list) or not data:
        raise UserError(
            f"{path} holds no items; a task file is a YAML list of "
            "{prompt, expected, scorer} items."
        )
    items = tuple(_item(path, i, x, custom is not None) for i, x in enumerate(data, 1))
    return Task(
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        items=items,
        abs_tol=abs_tol,
        rel_tol=rel_tol,
        custom=custom,
        custom_name=scorer or None,
    )


# ------------------------------------------------------------------------------------ scoring


def _as_number(x: object) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, str):
        m = NUMBER.fullmatch(x.strip())
        return float(m.group().replace(",", "")) if m else None
    return None


def first_number(text: str) -> float | None:
    """The first number written in `text` (thousands commas dropped), or None."""
    m = NUMBER.search(text)
    return float(m.group().replace(",", "")) if m else None


def first_line(text: str) -> str:
    """The first non-empty line, stripped ('' when there is none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def score_exact(answer: str, expected: object) -> bool:
    return first_line(answer) == str(expected).strip()


def score_regex(answer: str, pattern: object) -> bool:
    return re.search(str(pattern), answer) is not None


def score_number(answer: str, expected: object, abs_tol: float, rel_tol: float) -> bool:
    want, got = _as_number(expected), first_number(answer)
    if want is None or got is None:
        return False
    return abs(got - want) <= max(abs_tol, rel_tol * abs(want))


def score(task: Task, item: TaskItem, answer: str) -> bool:
    """Whether `answer` is right for `item`; a custom scorer must say True or False."""
    if task.custom is not None:
        verdict = task.custom(answer, item)
        if not isinstance(verdict, bool | int) or verdict not in (0, 1):
            raise TypeError(f"{task.custom_name} returned {verdict!r}, not True or False")
        return bool(verdict)
    if item.scorer == "exact":
        return score_exact(answer, item.expected)
    if item.scorer == "regex":
        return score_regex(answer, item.expected)
    tol = task.abs_tol if item.tolerance is None else item.tolerance
    return score_number(answer, item.expected, tol, task.rel_tol)


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of `correct` successes in `n` (None for n = 0): unlike the
    normal approximation it stays within [0, 1] and is not zero-width at 0 or n."""
    if n <= 0:
        return None
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


# --------------------------------------------------------------------------------- answering


class TaskRecord(TypedDict):
    """One item's line in task.jsonl."""

    item: int
    prompt: str
    answer: str | None
    expected: Any
    scorer: str
    score: int
    error: str | None


def answer(http: httpx.Client, prompt: str, tokens: int, slot: int) -> str:
    """The server's greedy answer to `prompt` (raw text, llama-server's /completion)."""
    r = http.post(
        "/completion",
        json={
            "prompt": prompt,
            "n_predict": tokens,
            "temperature": 0.0,
            "samplers": ["temperature"],
            "cache_prompt": True,
            "id_slot": slot,
            "stream": False,
        },
    )
    r.raise_for_status()
    data = r.json()
    return str(data.get("content") or "") if isinstance(data, dict) else ""


def run_task(
    task: Task,
    base_url: str,
    headers: Mapping[str, str],
    tokens: int,
    slots: int,
    timeout_s: float,
    out: Path,
) -> TaskBlock:
    """Ask every item, `slots` at a time, score the answers, write task.jsonl to `out`; the
    block result.json keeps."""
    t0 = time.perf_counter()
    workers = max(1, slots)
    with httpx.Client(base_url=base_url, headers=dict(headers), timeout=timeout_s) as http:

        def one(i: int) -> TaskRecord:
            item = task.items[i]
            rec: TaskRecord = {
                "item": i + 1,
                "prompt": item.prompt,
                "answer": None,
                "expected": item.expected,
                "scorer": item.scorer,
                "score": 0,
                "error": None,
            }
            try:
                text = answer(http, item.prompt, tokens, i % workers)
                rec["answer"] = text
                rec["score"] = int(score(task, item, text))
            except Exception as exc:  # a failed request or a user's scorer: the item scores 0
                rec["error"] = f"{type(exc).__name__}: {exc}"
            return rec

        # Worker w asks items w, w+slots, ... in turn, each on its own slot (as the probe does):
        # the server batches them as the job's setting batches real work.
        groups = [range(w, len(task.items), workers) for w in range(workers)]
        records = sorted(each_group(one, groups), key=lambda r: r["item"])
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in records))
    tmp.replace(out)
    return summarise(task, records, tokens, time.perf_counter() - t0, out.name)


def summarise(
    task: Task, records: Sequence[TaskRecord], tokens: int, seconds: float, file: str
) -> TaskBlock:
    """result.json's `task` block for these scored records."""
    n = len(records)
    correct = sum(r["score"] for r in records)
    ci = wilson(correct, n)
    errors = [r["error"] for r in records if r["error"]]
    return {
        "file": file,
        "task": task.path.name,
        "task_sha256": task.sha256,
        "scorer": task.custom_name,
        "items": n,
        "correct": correct,
        "accuracy": correct / n if n else None,
        "ci_low": None if ci is None else round(ci[0], 6),
        "ci_high": None if ci is None else round(ci[1], 6),
        "confidence": 0.95,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "tokens": tokens,
        "seconds": round(seconds, 3),
    }
