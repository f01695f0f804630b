"""The expert review of the CPU study's first run (tests/cpu_busy_run.py, on a busy host): each
finding on the published results, and the class of fault it belongs to on small synthetic
cases. A verdict names an effect ("hurt", "helped", "no difference") only from comparisons
decided on one machine state (or bridged); where the verdict's own series has none and other
settings have, it says what they measured and where; a projection measured on a host busy
with other work says so beside it, and names the workload it is at where several were swept."""

from __future__ import annotations

from functools import cache

from benchkit.report.analysis.numbers import DraftingNumbers, FactorNumbers, ProjectionNumbers
from benchkit.report.verdicts import factor_words
from benchkit.report.verdicts.folder import Analysed, analyse_folder
from benchkit.report.verdicts.kinds.drafting import SPEC
from benchkit.report.verdicts.kinds.drafting.sentence import mtp_sentence
from benchkit.report.verdicts.kinds.drafting.words import clauses, mtp_runs_text
from benchkit.report.verdicts.kinds.factor.verdict import _state
from benchkit.report.verdicts.projection_words import application_text
from benchkit.report.writeup.headline import headline
from tests.cpu_busy_run import cpu_busy_run


@cache
def cpu() -> Analysed:
    # The study's first run, on a busy host (tests/cpu_busy_run.py): the data of these findings.
    return analyse_folder(cpu_busy_run(), ["study.quality.limit={changed: 0.25}"])


def _clause(factor: str, lang: str = "en") -> str:
    v = cpu().verdict(factor)
    assert v is not None
    return str(clauses(v, lang)[0](None))


def test_a_draft_model_decided_on_one_machine_state_elsewhere_is_said_with_its_figures() -> None:
    """Finding 1: the prose q8_0 pair (jobs 10 and 13) and the prose q4_0 pair (11 and 14)
    ran on one machine state and are decided (2.62x, 5.1x): the headline said only that the
    draft model "was not compared on one machine state (each pair ran on two)"."""
    v = cpu().verdict("spec=draft")
    assert v is not None and isinstance(v.numbers, DraftingNumbers)
    one_state = {
        tuple(sorted(e["comparison"]["jobs"])): e
        for e in v.numbers.contexts
        if e["comparison"]["machine"] == "same"
    }
    assert set(one_state) == {("10", "13"), ("11", "14")}
    assert all(e["effect"] == "hurts" for e in one_state.values())
    said = _clause("spec=draft")
    assert said.startswith("a draft model took ")
    assert (
        "2.62x the time of no drafting at the prose-10 workload, q8_0 K cache (one machine state)"
        in said
    )
    assert (
        "5.1x the time of no drafting at the prose-10 workload, q4_0 K cache (one machine state)"
        in said
    )
    assert "not compared on one machine state" not in said
    # The table cell and the section say the same, never an effect the open pair was read as.
    cell = SPEC.table_value(v, "en") if SPEC.table_value else ""
    assert cell == said.removeprefix("a draft model ")
    assert mtp_sentence(v, "en").startswith("A draft model took 5.1x")
    assert "판가름하지 못했습니다" in _clause("spec=draft", "ko")


def test_a_single_open_pair_across_machine_states_names_no_effect() -> None:
    """Findings 2 and 3: "spec=draft: hurt" rested on the code f16 pair, 1.28x (0.66-2.48),
    and "spec=ngram: made no difference" on 0.96x (0.61-1.52), both open and across two
    machine states: the value is open, and the cell says why."""
    for factor in ("spec=draft", "spec=ngram"):
        v = cpu().verdict(factor)
        assert v is not None and v.verdict == [{"from": None, "to": None, "effect": "open"}]
        cell = SPEC.table_value(v, "en") if SPEC.table_value else ""
        assert "hurt" not in cell and "no difference" not in cell
    ngram = cpu().verdict("spec=ngram")
    assert ngram is not None
    assert (
        _clause("spec=ngram")
        == "n-gram drafting was not compared on one machine state (each pair ran on two)"
    )


def test_an_open_within_margin_pair_is_not_decided_never_no_difference() -> None:
    """Finding 4: the K cache at prose without drafting, 1.02x (0.85-1.21), was said to make
    "no difference"; no setting is decided, so no dependence on the others is claimed."""
    v = cpu().verdict("cache_type_k")
    assert v is not None and isinstance(v.numbers, FactorNumbers)
    prose = next(
        e for e in v.numbers.contexts if e["context"] == {"workload": "prose-10", "spec": "none"}
    )
    assert prose["state"] == "open" and prose["best"] is None
    assert isinstance(v.verdict, dict) and v.verdict["state"] == "mixed"
    value = factor_words.verdict_value(v, "en")
    # Six settings: counted by state, not spelled out (the headline and the table cell).
    assert "not decided at 2 settings" in value
    assert "no difference" not in value
    clause = factor_words.factor_clause(v, "en")
    assert "depends" not in clause and "no difference" not in clause
    assert "was not decided on" in factor_words.factor_sentence(v, "en")


def test_a_projection_from_a_busy_host_says_so_and_names_the_workload() -> None:
    """Finding 5: 13.5 min for code came from job 0, whose server had 0.62 of its thread on a
    busy host, said bare; and "That is at the workload you chose" though both were swept."""
    p = cpu().verdict("projection")
    assert p is not None and isinstance(p.numbers, ProjectionNumbers)
    code = next(a for a in p.numbers.application or [] if a["value"] == "code-edit-10")
    assert code.get("host_busy") == ["0"]
    assert p.numbers.application_at == {"workload": "prose-10"}
    text = application_text(p, "en")
    assert "you chose" not in text
    assert text.startswith("That is with the prose-10 workload")
    assert "13.5 min (job 0 ran on a host busy with other work, a machine state of its own)" in text
    by = {v.factor: v for v in cpu().verdicts}
    said = headline(by, "en", "unit")
    assert "13.5 min with the code-edit-10 workload (job 0 ran on a host busy" in said
    assert "hurt" not in said and "no difference" not in said


def test_the_class_a_setting_is_named_only_from_decided_pairs() -> None:
    """Synthetic: a setting's state from its pairs on one machine state."""

    def row(effect: str) -> dict[str, object]:
        return {"effect": effect, "comparison": {"machine": "same"}}

    assert _state([row("worse"), row("open")], False) == "best"  # type: ignore[list-item]
    assert _state([row("same"), row("same")], False) == "no difference"  # type: ignore[list-item]
    assert _state([row("same"), row("open")], False) == "open"  # type: ignore[list-item]
    assert _state([row("open")], False) == "open"  # type: ignore[list-item]
    assert _state([], True) == "across"


def test_the_class_runs_partly_open_never_say_every_slot_count() -> None:
    runs = [
        {"from": 1, "to": 1, "effect": "hurts"},
        {"from": 2, "to": 4, "effect": "open"},
        {"from": 8, "to": None, "effect": "hurts"},
    ]
    text = mtp_runs_text(runs, 16, "en")  # type: ignore[arg-type]
    assert text == "hurt at 1 slot and 8+ slots, not decided at 2–4 slots"
    assert mtp_runs_text([{"from": None, "to": None, "effect": "open"}], None, "en") == (
        "was not decided"
    )
