"""The recommended server command's context, sized for every unit of the workload: a job sized
its context for the units it ran (server.ctx_policy=fit), and a raced or `workload.units=N`
job ran only the first ones, so its command as run overflows on a longer unit it never saw
(the H100 study's job 9 ran 8 of gpu-16's 16 units with 3840 tokens a slot; unit u010 needs
3642 + 256). Sized here the way `server.plan.context_size` sizes a fit: the longest prompt of
all the workload's units plus the cap, padded as llama-server pads a slot.

From what the job recorded of its workload (provenance.workload: the longest prompt over the
whole fixture, the cap), else from the fixture itself where it is found with the same
fingerprint. Computes only; `closing` words it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from benchkit.errors import UserError
from benchkit.models.trained_context import trained_context
from benchkit.paths import workloads_dir
from benchkit.results.schema import ServerInfo, WorkloadInfo
from benchkit.server.plan import byte_bound, pad
from benchkit.workload.model import load_workload

# The flags that size a server's context: llama-server's total over all slots, and vLLM's and
# SGLang's per sequence (server.vllm_sglang).
TOTAL_FLAGS = ("--ctx-size", "-c")
PER_SLOT_FLAGS = ("--max-model-len", "--context-length")


@dataclass(frozen=True)
class Sizing:
    """What the recommended command's context holds, and what its job ran with."""

    flag: str  # the flag that sizes it, as the command has it
    value: int  # the flag's value in the command
    ran: int  # its value as the job ran
    per_slot: int  # each slot's context in the command
    slots: int
    # What it is sized for: the longest prompt of the workload's `units` units plus the cap;
    # None where the workload's other units were not recorded and could not be read.
    longest_prompt: int | None
    cap: int | None
    units: int | None
    replayed: int | None  # the units the job ran
    workload: str
    # The context the model was trained for, where its file is here to read: llama-server
    # caps a slot at it, so a slot sized beyond it refuses the longer prompts.
    trained: int | None = None

    @property
    def over_trained(self) -> bool:
        return self.trained is not None and self.per_slot > self.trained

    @property
    def raised(self) -> bool:
        return self.value > self.ran


def sized(
    argv: Sequence[str],
    server: ServerInfo,
    workload: WorkloadInfo | None,
    model_path: str | None = None,
) -> Sizing | None:
    """The context of `argv` (the job's command) and what it should be for every unit of the
    workload, with the model's trained context where its file (`model_path`) is here; None
    where the command has no context flag or the job recorded no sizes."""
    at = next((i for i, a in enumerate(argv) if a in (*TOTAL_FLAGS, *PER_SLOT_FLAGS)), None)
    total, per_slot = server.ctx_total, server.ctx_per_slot
    if at is None or at + 1 >= len(argv) or not total or not per_slot or workload is None:
        return None
    flag = argv[at]
    try:
        ran = int(argv[at + 1])
    except ValueError:
        return None
    slots = server.slots or 1
    longest, cap = _longest_prompt(workload), workload.cap
    base = Sizing(
        flag, ran, ran, per_slot, slots, longest, cap, workload.units,
        workload.units_replayed, workload.fixture or "",
        trained_context(model_path) if model_path and Path(model_path).is_file() else None,
    )  # fmt: skip
    if longest is None or cap is None or pad(longest + cap) <= per_slot:
        return base
    need = pad(longest + cap)
    # The total holds `total / per_slot` slots' contexts (one where the cache is unified).
    value = need * max(1, total // per_slot) if flag in TOTAL_FLAGS else need
    return replace(base, value=value, per_slot=need)


def resized(argv: Sequence[str], s: Sizing | None) -> list[str]:
    """`argv` with its context flag's value as `s` sizes it."""
    out = list(argv)
    if s is not None and s.raised:
        at = out.index(s.flag)
        out[at + 1] = str(s.value)
    return out


def _longest_prompt(w: WorkloadInfo) -> int | None:
    """The longest prompt over every unit of the workload: as the job recorded it, else from
    the fixture where it is found unchanged (a call without its length counted at its byte
    bound, as a fit does); None where neither says."""
    if w.max_prompt_tokens is not None:
        return w.max_prompt_tokens
    if w.units_replayed is not None and w.units is not None and w.units_replayed >= w.units:
        return None  # every unit ran: the job's own fit already holds them all
    for folder in _fixture_folders(w):
        try:
            found = load_workload(folder)
        except (UserError, OSError, ValueError):
            continue
        if found.fingerprint() != w.fingerprint:
            continue
        bounds = [c.prompt_tokens or byte_bound(c) for c in found.calls]
        return None if any(b is None for b in bounds) else max((b or 0) for b in bounds)
    return None


def _fixture_folders(w: WorkloadInfo) -> list[Path]:
    """Where the workload may be: the path the job recorded, benchkit's fixture of its name."""
    out: list[Path] = []
    path = w.extra.get("path")
    if isinstance(path, str) and Path(path).is_dir():
        out.append(Path(path))
    if w.fixture and "/" not in w.fixture and (workloads_dir() / w.fixture).is_dir():
        out.append(workloads_dir() / w.fixture)
    return out
