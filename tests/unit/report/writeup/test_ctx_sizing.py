"""The recommended server command's context holds every unit of the workload, not only the
units its job ran (a hostile user's review: the H100 study's command, from job 9's 8 raced
units, overflowed gpu-16's unit u010)."""

from __future__ import annotations

from pathlib import Path

from benchkit.paths import repo_root
from benchkit.report.verdicts.folder import analyse_folder
from benchkit.report.writeup.closing import sizing_text, use_this_view
from benchkit.report.writeup.ctx_sizing import resized, sized
from benchkit.report.writeup.use_this import UseThis, use_this
from benchkit.results.schema import ServerInfo, WorkloadInfo
from benchkit.server.plan import pad
from benchkit.workload.model import load_workload

H100 = repo_root() / "docs" / "studies" / "h100-vulkan-vs-cuda-warm" / "results"
ANCHORS = (
    "study.anchors=[../machine-check/slots-1,../machine-check/slots-8,../machine-check/slots-16]"
)


def _flag(command: str, flag: str) -> int:
    words = command.split()
    return int(words[words.index(flag) + 1])


def test_the_h100_studys_command_holds_every_unit_of_gpu_16() -> None:
    u = use_this(analyse_folder(H100, [ANCHORS]), program="benchkit")
    assert u.job == "9" and u.server_command is not None and u.sizing is not None
    slots = _flag(u.server_command, "--parallel")
    per_slot = _flag(u.server_command, "--ctx-size") // slots
    # Every unit of the workload, u010 (the longest prompt) among them, fits a slot.
    work = load_workload(repo_root() / "fixtures" / "workloads" / "gpu-16")
    need = {
        unit.id: max(c.prompt_tokens or 0 for c in unit.calls) + work.cap for unit in work.units
    }
    assert need["u010"] > 3840  # what job 9's 8 units were sized with
    assert all(per_slot >= n for n in need.values()), (per_slot, need)
    assert per_slot == pad(max(need.values()))  # and no more than a fit would give
    text = " ".join(use_this_view(u, "en").server_intro.split())
    assert "Its --ctx-size is raised from 30720 to 32768: job 9 ran 8 of the 16 units" in text
    assert "longest prompt of all of them (3642 tokens) plus the cap (256)" in text


SERVER = ServerInfo(
    argv=["llama-server", "--parallel", "4", "--ctx-size", "8192", "--batch-size", "2048"],
    ctx_total=8192,
    ctx_per_slot=2048,
    slots=4,
)


def _work(**kw: object) -> WorkloadInfo:
    base: dict[str, object] = {
        "fixture": "w", "units": 10, "units_replayed": 10, "max_prompt_tokens": 1500, "cap": 256,
    }  # fmt: skip
    return WorkloadInfo(**{**base, **kw})  # type: ignore[arg-type]


def test_a_context_that_holds_every_unit_is_left_as_the_job_ran_it() -> None:
    s = sized(SERVER.argv, SERVER, _work())
    assert s is not None and not s.raised and resized(SERVER.argv, s) == SERVER.argv
    said = sizing_text(UseThis(None, False, job="3", sizing=s), "en")
    assert "gives each slot 2048 tokens, enough for the longest prompt of all 10 units" in said


def test_a_longer_unit_the_job_did_not_run_raises_the_total_for_every_slot() -> None:
    s = sized(SERVER.argv, SERVER, _work(units_replayed=4, max_prompt_tokens=3000))
    assert s is not None and s.raised and s.per_slot == pad(3000 + 256) == 3328
    assert resized(SERVER.argv, s)[4] == str(4 * 3328)
    # A unified cache of one slot: the total is the slot's context.
    one = ServerInfo(argv=["llama-server", "-c", "2048"], ctx_total=2048, ctx_per_slot=2048)
    s1 = sized(one.argv, one, _work(max_prompt_tokens=3000))
    assert s1 is not None and resized(one.argv, s1) == ["llama-server", "-c", "3328"]


def test_an_engine_sized_per_sequence_gets_the_per_slot_context() -> None:
    vllm = ServerInfo(
        argv=["vllm", "serve", "m", "--max-model-len", "2048"], ctx_total=8192, ctx_per_slot=2048
    )
    s = sized(vllm.argv, vllm, _work(max_prompt_tokens=3000))
    assert s is not None and resized(vllm.argv, s)[-1] == "3328"


def test_unknown_lengths_of_units_not_run_are_said_not_guessed() -> None:
    work = _work(units_replayed=4, max_prompt_tokens=None, fixture="not-a-fixture")
    s = sized(SERVER.argv, SERVER, work)
    assert s is not None and not s.raised
    said = sizing_text(UseThis(None, False, job="3", sizing=s), "en")
    assert "holds only the 4 of the 10 units of workload not-a-fixture that job 3 ran" in said


def test_a_slot_beyond_the_models_trained_context_is_said_to_fail(tmp_path: Path) -> None:
    """A hostile user's model trained for 3,500 tokens: the command sized a slot at 4,352 for
    a 4,000-token unit, and llama-server capped the slot and refused the prompt (HTTP 400).
    The report says so beside the command; a model trained for more says nothing."""
    from tests.unit.server.test_plan import _gguf

    small = _gguf(tmp_path / "small.gguf", 3500)
    s = sized(SERVER.argv, SERVER, _work(units_replayed=4, max_prompt_tokens=4000), str(small))
    assert s is not None and s.trained == 3500 and s.over_trained
    said = sizing_text(UseThis(None, False, job="3", sizing=s), "en")
    assert "The model was trained for 3500 tokens, fewer than the 4352 a slot needs" in said
    big = _gguf(tmp_path / "big.gguf", 65536)
    ok = sized(SERVER.argv, SERVER, _work(units_replayed=4, max_prompt_tokens=4000), str(big))
    assert ok is not None and not ok.over_trained
    assert "trained for" not in sizing_text(UseThis(None, False, job="3", sizing=ok), "en")
