"""benchkit.config.override_check: the override mistakes Hydra answers with a page of text are one
sentence naming the thing and the fix (a review's hostile user typed backend=cudaa, slot=16
and workload=decode16)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

import pytest

from benchkit import app
from benchkit.config.override_check import problem
from benchkit.config.schema import LOAD_KEYS_READ, BenchConfig, LoadConfig, LoadProcess


def test_an_option_a_group_does_not_have_names_the_near_one_and_the_choices() -> None:
    said = problem(["-m", "backend=cuda,vulkn", "slots=1,2"])
    assert said is not None and said.startswith("there is no backend named 'vulkn'")
    assert "did you mean backend=vulkan?" in said and "base_" not in said
    assert "conf/backend/vulkn.yaml" in said and "\n" not in said
    assert "did you mean workload=decode-16?" in (problem(["workload=decode16"]) or "")


def test_a_key_benchkit_does_not_have_is_named_with_the_near_one() -> None:
    said = problem(["slot=16"])
    assert said is not None and said.startswith("there is no setting named 'slot'")
    assert "did you mean slots=...?" in said


def test_what_hydra_expands_or_a_user_adds_is_left_to_hydra() -> None:
    fine = [
        ["-m", "slots=1,2,4", "backend=cpu", "model=tiny-moe", "workload=first"],
        ["--multirun", "backend=glob(*)", "slots=range(1,3)"],
        ["+extra=1", "~mtp", "hydra.sweep.dir=x", "hydra/sweeper=racing", "server.threads=2"],
        ["--config-dir", "mine", "backend=my-own"],
        ["model@spec.draft_model=tiny-moe"],
    ]
    for argv in fine:
        assert problem(argv) is None, argv


def test_a_value_its_field_cannot_take_is_one_sentence() -> None:
    """The second review's hostile user: slots=16x, mtp=maybe and server.flash_attn=yes fell
    through to Hydra's multi-line merge error. slots=0 is a whole number: the job refuses it
    with its reason in result.json (tests/reliability/test_input_secrets.py)."""
    assert problem(["slots=16x"]) == "slots=16x is not a whole number: give one, e.g. slots=2."
    assert problem(["-m", "slots=0,2"]) is None
    assert problem(["mtp=maybe"]) == "mtp=maybe is not true or false: give mtp=true or mtp=false."
    assert problem(["server.flash_attn=yes"]) == (
        "server.flash_attn=yes is not one of on, off, auto: choose one of them."
    )
    assert problem(["-m", "mtp=false,true", "server.flash_attn=on", "repeats=3"]) is None
    assert problem(["mtp=yes"]) is None


def test_a_load_key_the_chosen_process_ignores_is_refused_with_the_fix() -> None:
    """Issue #45: `load=closed load.rate=2` ran as closed, the rate silently unused. Any load
    key the chosen process does not read is one sentence naming it and the loads that do."""
    assert problem(["load=closed", "load.rate=2"]) == (
        "load.rate=2 is ignored by load=closed: only load=poisson and load=constant read "
        "load.rate, so drop it or choose one of those."
    )
    # No load= given: the default (closed) is the one named.
    said = problem(["-m", "slots=1,2", "load.max_in_flight=8"])
    assert said is not None and said.startswith(
        "load.max_in_flight=8 is ignored by load=closed (the default): only load=poisson, "
        "load=constant and load=trace read"
    )
    assert problem(["-m", "load=poisson", "load.speed=1,2"]) == (
        "load.speed=1,2 is ignored by load=poisson: only load=trace reads load.speed, so drop "
        "it or choose load=trace."
    )
    assert "ignored by load=constant" in (problem(["load=constant", "load.seed=3"]) or "")
    assert "ignored by load=trace" in (problem(["load=trace", "+load.rate=3"]) or "")
    assert "ignored by load.process=closed" in (
        problem(["load.process=closed", "load.requests=4"]) or ""
    )
    for argv in (problem(["load.rate=2"]), problem(["load=trace", "load.seed=1"])):
        assert argv is not None and "\n" not in argv


def test_a_swept_load_key_some_process_of_a_mixed_sweep_ignores_is_refused() -> None:
    """load=closed,poisson load.rate=1,2 would measure the closed job once per rate."""
    said = problem(["-m", "load=closed,poisson", "load.rate=1,2"])
    assert said == (
        "load.rate=1,2 is swept, but load=closed ignores it and would measure the same jobs "
        "once per value: run load=closed as a sweep of its own, without load.rate."
    )
    # One value: the poisson jobs read it, the closed job runs once.
    assert problem(["-m", "load=closed,poisson", "load.rate=1"]) is None


def test_load_keys_the_chosen_process_reads_pass() -> None:
    fine = [
        ["-m", "load=poisson", "load.rate=0.5,1,2", "load.seed=1", "load.requests=8"],
        ["load=constant", "load.rate=1", "load.max_pass_s=60", "load.max_in_flight=8"],
        ["-m", "load=trace", "load.speed=1,2,4"],
        ["load.process=poisson", "load.rate=2"],
        ["-m", "load=poisson,constant", "load.rate=range(1,3)"],
        ["load=closed", "load.rate=null"],
        # Hydra or the user's config decides the process: not judged here.
        ["--config-dir", "mine", "load.rate=2"],
        ["-m", "load=glob(*)", "load.rate=2"],
    ]
    for argv in fine:
        assert problem(argv) is None, argv


def test_every_load_key_is_read_by_some_open_loop_process() -> None:
    """LOAD_KEYS_READ stays in step with LoadConfig: a new key is declared for the processes
    that read it, or override_check would let an override of it pass unjudged."""
    keys = {f.name for f in dataclasses.fields(LoadConfig)} - {"process"}
    assert set().union(*LOAD_KEYS_READ.values()) == keys
    assert set(LOAD_KEYS_READ) == set(LoadProcess)
    assert not LOAD_KEYS_READ[LoadProcess.closed]


def test_the_command_line_refuses_it_before_any_job(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def runs() -> None:
        raise AssertionError("a job ran")

    monkeypatch.setattr(app, "_hydra_main", runs)
    monkeypatch.setattr(sys, "argv", ["benchkit", "load=closed", "load.rate=2"])
    with pytest.raises(SystemExit) as exit_:
        app.main()
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith("benchkit: load.rate=2 is ignored by load=closed")


def test_a_value_the_override_grammar_cannot_read_is_one_sentence_not_hydras_page() -> None:
    # Each once answered with the parser's message, a link and a stack-trace hint.
    for arg, said in [
        ("slots=[1,2", "opens a [ it does not close"),
        ("workload.units={a", "opens a { it does not close"),
        ("study.anchors=[../a,../b", "opens a [ it does not close"),
        ("backend=vulkan,", "is not a value Hydra's override grammar reads"),
        ("slots=range(1,", "is not a value Hydra's override grammar reads"),
        ("study.title=it's", "quote text holding spaces, quotes or parentheses"),
    ]:
        got = problem(["-m", arg]) or ""
        assert said in got and arg in got and "\n" not in got, (arg, got)
        assert "expecting" not in got  # the grammar's token list says nothing to act on
    # What the grammar reads is still left to the checks after it (and to Hydra).
    assert problem(["study.quality.limit={changed:0.25}", "study.anchors=[../a,../b]"]) is None


def test_a_new_key_of_a_mapping_is_added_as_the_readme_writes_it(
    compose_cfg: Callable[..., BenchConfig],
) -> None:
    """The README's `study.slo={ttft_ms_p95: 2000}` met Hydra's "Key 'ttft_ms_p95' is not in
    struct" (a page of text) on `python -m benchkit`, while the report took it."""
    from benchkit.config.override_check import adding

    given = [
        "-m",
        "study.slo={ttft_ms_p95: 2000}",
        "study.quality.limit.changed=0.25",
        "+study.quality.reference={slots: 1}",
        "slots=1,2",
        "hydra.sweep.dir=x",
    ]
    argv = adding(given)
    assert argv == [
        "-m",
        "++study.slo={ttft_ms_p95: 2000}",
        "++study.quality.limit.changed=0.25",
        "+study.quality.reference={slots: 1}",
        "slots=1,2",
        "hydra.sweep.dir=x",
    ]
    cfg = compose_cfg(*argv[1:3], "study=seed-r9700")
    assert cfg.study.slo == {"ttft_ms_p95": 2000.0} and cfg.study.quality.limit == {"changed": 0.25}


def test_a_groups_number_that_is_no_number_is_one_sentence() -> None:
    """Hydra answered `workload.units=abc` with a page ("Error merging override ... could not
    be converted to Integer", full_key, reference_type, a stack-trace hint)."""
    assert problem(["workload.units=abc"]) == (
        "workload.units=abc is not a whole number: give one, e.g. workload.units=2."
    )
    said = problem(["-m", "server.job_deadline_s=60,soon"]) or ""
    assert said.startswith("server.job_deadline_s=soon is not a number")
    for fine in ("workload.units=null", "workload.units=4,8", "load.rate=0.5,2", "study.noise=0.1"):
        assert problem(["-m", "load=poisson", fine]) is None, fine
