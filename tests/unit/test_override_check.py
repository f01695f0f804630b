"""benchkit.override_check: the override mistakes Hydra answers with a page of text are one
sentence naming the thing and the fix (a review's hostile user typed backend=cudaa, slot=16
and workload=decode16)."""

from __future__ import annotations

from benchkit.override_check import problem


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
        ["slots=1,2,4", "backend=cpu", "model=tiny-moe", "workload=first"],
        ["backend=glob(*)", "slots=range(1,3)"],
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
    assert problem(["mtp=false,true", "server.flash_attn=on", "repeats=3", "mtp=yes"]) is None
