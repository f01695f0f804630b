"""The one identity comparison every engine's proof goes through, in each engine's words, and
the telling line of a server log. The proof against real servers: tests/reliability
(llama-server, external) and test_engine_jobs.py (the engine stand-in)."""

from __future__ import annotations

from pathlib import Path

from benchkit.server.serve import (
    ENGINE_TERMS,
    EXTERNAL_TERMS,
    LLAMA_TERMS,
    Shown,
    identity_problems,
    log_reason,
)

NONCE = "benchkit-0-1a2b3c4d"


def test_llama_server_must_show_the_nonce_the_slots_and_the_model_file() -> None:
    def problems(shown: Shown) -> list[str]:
        return identity_problems(
            shown, name=NONCE, slots=4, terms=LLAMA_TERMS, model_path="/x/tiny-moe.gguf"
        )

    assert problems(Shown(NONCE, 4, "/cache/models/tiny-moe.gguf")) == []
    assert problems(Shown("someone-else", None, "/m/qwen.gguf")) == [
        f"model_alias is 'someone-else', expected this job's nonce '{NONCE}'",
        "total_slots is None, expected 4",
        "model_path is '/m/qwen.gguf', expected '/x/tiny-moe.gguf'",
    ]


def test_an_engine_that_shows_no_slot_count_is_judged_by_its_name() -> None:
    assert identity_problems(Shown(NONCE, None), name=NONCE, slots=2, terms=ENGINE_TERMS) == []
    assert identity_problems(Shown(None, 3), name=NONCE, slots=2, terms=ENGINE_TERMS) == [
        f"served model is None, expected this job's nonce '{NONCE}'",
        "it runs 3 sequences at once, expected 2",
    ]


def test_an_external_server_may_be_named_by_its_alias_or_its_model_file() -> None:
    by_file = Shown("", 2, None, ("tiny-moe",))
    assert identity_problems(by_file, name="tiny-moe", slots=2, terms=EXTERNAL_TERMS) == []
    other = Shown("qwen", 2, None, ("qwen3-30b",))
    assert identity_problems(other, name="tiny-moe", slots=3, terms=EXTERNAL_TERMS) == [
        "it serves ['qwen', 'qwen3-30b'], not model.name='tiny-moe'",
        "it has total_slots=2, not slots=3",
    ]


def test_the_telling_line_of_a_server_log(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("loading\nerror: unknown argument: --no-such-flag\nexiting\n")
    assert log_reason(log) == "error: unknown argument: --no-such-flag"
    log.write_text("\nstill loading\n")
    assert log_reason(log) == "still loading"
    assert log_reason(tmp_path / "absent.log") == "no server log"
