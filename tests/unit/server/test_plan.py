"""Planning: the exact llama-server command line and context sizing, without a server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchkit.config.schema import BenchConfig, OutputPolicy
from benchkit.errors import UserError
from benchkit.models.trained_context import trained_context
from benchkit.server.engines import Build, LlamaCpp, Models, Target
from benchkit.server.plan import (
    MESSAGE_ALLOWANCE,
    TEMPLATE_ALLOWANCE,
    TEXT_ALLOWANCE,
    byte_bound,
    context_size,
    longest_prompt,
    plan_replay,
    plan_server,
    sampling_fields,
)
from benchkit.workload import Unit
from benchkit.workload.model import Call

Compose = Callable[..., BenchConfig]


def _flag(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_argv_carries_every_configured_flag(compose_cfg: Compose) -> None:
    cfg = compose_cfg("slots=3", "server=seed")
    spec = plan_server(
        cfg, server_bin="/x/llama-server", model_path="/m.gguf", port=4321,
        alias="benchkit-7-abcd", longest_prompt=1000, cap=64,
    )  # fmt: skip
    a = spec.argv
    assert a[0] == "/x/llama-server"
    assert _flag(a, "--parallel") == "3"
    assert _flag(a, "--port") == "4321" and _flag(a, "--host") == "127.0.0.1"
    assert _flag(a, "--alias") == "benchkit-7-abcd"
    assert _flag(a, "--batch-size") == "4096" and _flag(a, "--ubatch-size") == "2048"
    assert _flag(a, "--flash-attn") == "on"
    assert _flag(a, "--cache-type-k") == "q8_0" and _flag(a, "--cache-type-v") == "q8_0"
    assert "--metrics" in a and "--no-kv-unified" in a
    assert "--reuse-port" not in a
    # 1000 + 64 = 1064 -> padded to 1280 per slot, x3 slots.
    assert _flag(a, "--ctx-size") == str(3 * 1280)
    assert spec.ctx_per_slot == 1280


@pytest.mark.parametrize(
    ("slots", "longest", "cap"), [(1, 22000, 4096), (8, 22000, 4096), (4, 5, 1)]
)
def test_fit_context_holds_longest_prompt_plus_cap_in_every_slot(
    compose_cfg: Compose, slots: int, longest: int, cap: int
) -> None:
    cfg = compose_cfg(f"slots={slots}")
    total, per_slot = context_size(cfg, longest, cap)
    assert per_slot >= longest + cap
    assert per_slot % 256 == 0
    # llama-server splits -c evenly between slots (non-unified KV).
    assert total // slots == per_slot


def test_fixed_context_too_small_is_a_user_error(compose_cfg: Compose) -> None:
    cfg = compose_cfg("slots=4", "server.ctx_policy=fixed", "server.ctx=4096")
    with pytest.raises(UserError, match="longest prompt"):
        context_size(cfg, 2000, 64)


def test_context_beyond_synthetic_training_context_is_refused(compose_cfg: Compose) -> None:
    cfg = compose_cfg("model.synthetic.ctx_train=2048")
    with pytest.raises(UserError, match="ctx_train"):
        context_size(cfg, 4000, 64)


def test_a_fit_padded_past_the_trained_context_is_capped_there(compose_cfg: Compose) -> None:
    """A hostile user's 3,343-token prompt plus a 128 cap (3,471) on a model trained for 3,500:
    refused as "needs 3584" (the padding is ours), or run with 3,584 recorded where the server
    capped the slot at 3,500. The need fits: the slot is sized at the trained context."""
    cfg = compose_cfg("slots=2", "model.synthetic.ctx_train=3500")
    total, per_slot = context_size(cfg, 3343, 128)
    assert (total, per_slot) == (7000, 3500)
    with pytest.raises(UserError, match="needs 3629 tokens per slot"):
        context_size(cfg, 3501, 128)
    # A real model file's trained context caps the same way (the caller reads it).
    real = compose_cfg("slots=1", "model.path=/m.gguf")
    assert context_size(real, 3343, 128, trained=3500)[1] == 3500


def test_mtp_on_a_model_without_mtp_layers_is_refused(compose_cfg: Compose) -> None:
    cfg = compose_cfg("mtp=true")
    with pytest.raises(UserError, match="MTP"):
        plan_server(cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=1, cap=1)


def test_mtp_flags(compose_cfg: Compose) -> None:
    cfg = compose_cfg("mtp=true", "model.has_mtp=true", "server.mtp_draft_max=2")
    spec = plan_server(
        cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=1, cap=1
    )
    assert _flag(spec.argv, "--spec-type") == "draft-mtp"
    assert _flag(spec.argv, "--spec-draft-n-max") == "2"


def test_api_key_is_passed_but_redacted(compose_cfg: Compose) -> None:
    cfg = compose_cfg("backend.api_key=sekrit-123")
    spec = plan_server(
        cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=1, cap=1
    )
    assert spec.api_key == "sekrit-123"
    assert "sekrit-123" not in " ".join(spec.argv) and "sekrit-123" not in str(spec.env)
    assert "sekrit-123" not in repr(spec)


def test_reuse_port_is_refused(compose_cfg: Compose) -> None:
    cfg = compose_cfg("server.extra_args=[--reuse-port]")
    with pytest.raises(UserError, match="reuse-port"):
        plan_server(cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=1, cap=1)


def test_sampling_fields(compose_cfg: Compose) -> None:
    assert sampling_fields(compose_cfg("sampling=unspecified")) == {}
    q = sampling_fields(compose_cfg("sampling=qwen-recommended"))
    assert q["temperature"] == 0.7 and q["top_k"] == 20 and q["presence_penalty"] == 1.5


def test_replay_policy_follows_fixture_unless_overridden(compose_cfg: Compose) -> None:
    r = plan_replay(compose_cfg(), fixture_policy="replay", fixture_cap=64)
    assert r.output_policy is OutputPolicy.replay and r.cap == 64 and r.workers == 4
    r = plan_replay(
        compose_cfg("workload.output_policy=natural", "workload.cap=32"),
        fixture_policy="replay", fixture_cap=64,
    )  # fmt: skip
    assert r.output_policy is OutputPolicy.natural and r.cap == 32


def _plan(cfg: BenchConfig, draft: str | None = None) -> tuple[str, ...]:
    spec = plan_server(
        cfg, server_bin="s", model_path="m", port=1, alias="a", longest_prompt=1, cap=1,
        draft_model_path=draft,
    )  # fmt: skip
    return spec.argv


def test_no_speculative_flags_by_default(compose_cfg: Compose) -> None:
    argv = _plan(compose_cfg())
    assert not [a for a in argv if a.startswith("--spec")]


def test_mtp_on_the_tiny_mtp_model(compose_cfg: Compose) -> None:
    argv = _plan(compose_cfg("mtp=true", "model=tiny-mtp"))
    assert _flag(argv, "--spec-type") == "draft-mtp"
    assert _flag(argv, "--spec-draft-n-max") == "3"
    assert "--spec-draft-model" not in argv


def test_spec_draft_flags(compose_cfg: Compose) -> None:
    cfg = compose_cfg("spec=draft", "spec.draft_max=5", "backend.n_gpu_layers=all")
    argv = _plan(cfg, draft="/cache/draft.gguf")
    assert _flag(argv, "--spec-type") == "draft-simple"
    assert _flag(argv, "--spec-draft-model") == "/cache/draft.gguf"
    assert _flag(argv, "--spec-draft-n-max") == "5"
    # The draft goes where the target goes.
    assert _flag(argv, "--spec-draft-ngl") == "all" == _flag(argv, "--n-gpu-layers")
    assert argv.count("--spec-type") == 1


def test_spec_draft_defaults_to_the_synthetic_tiny_moe(compose_cfg: Compose) -> None:
    cfg = compose_cfg("spec=draft")
    draft = cfg.spec.draft_model
    assert draft is not None and draft.name == "tiny-moe" and draft.synthetic is not None
    # Same vocabulary as the synthetic targets, which llama.cpp requires of a draft.
    assert draft.n_vocab == cfg.model.n_vocab == compose_cfg("model=tiny-mtp").model.n_vocab


def test_spec_draft_without_a_file_is_refused(compose_cfg: Compose) -> None:
    with pytest.raises(UserError, match="spec=draft"):
        _plan(compose_cfg("spec=draft"))
    # Every spec option composes a draft model (benchkit.config.drafting); one removed is refused.
    with pytest.raises(UserError, match="spec=draft needs a draft model"):
        _plan(compose_cfg("spec.type=draft", "spec.draft_model=null"), draft="/d.gguf")


@pytest.mark.parametrize(
    ("mode", "spec_type"),
    [("simple", "ngram-simple"), ("map_k", "ngram-map-k"), ("map_k4v", "ngram-map-k4v"),
     ("mod", "ngram-mod"), ("cache", "ngram-cache")],
)  # fmt: skip
def test_spec_ngram_flags(compose_cfg: Compose, mode: str, spec_type: str) -> None:
    argv = _plan(compose_cfg("spec=ngram", f"spec.ngram_mode={mode}"))
    assert _flag(argv, "--spec-type") == spec_type
    assert _flag(argv, "--spec-draft-n-max") == "64"
    assert "--spec-draft-model" not in argv


def test_mtp_and_spec_together_are_refused(compose_cfg: Compose) -> None:
    with pytest.raises(UserError, match="mtp=true and spec=ngram"):
        _plan(compose_cfg("mtp=true", "model=tiny-mtp", "spec=ngram"))


def test_synthetic_acceptance_length(compose_cfg: Compose) -> None:
    argv = _plan(compose_cfg("mtp=true", "model=tiny-mtp", "spec.synth_len=2.5"))
    assert _flag(argv, "--spec-synth-len") == "2.5"
    with pytest.raises(UserError, match="needs speculative decoding"):
        _plan(compose_cfg("spec.synth_len=2"))
    # At most every drafted token plus the target's own: draft_max + 1.
    with pytest.raises(UserError, match=r"between 1 and the draft length \+ 1 \(4\)"):
        _plan(compose_cfg("mtp=true", "model=tiny-mtp", "spec.synth_len=4.5"))


@pytest.mark.parametrize(
    ("override", "flag", "value"),
    [
        ("server.batch=1024", "--batch-size", "1024"),
        ("server.ubatch=256", "--ubatch-size", "256"),
        ("server.flash_attn=off", "--flash-attn", "off"),
        ("server.cache_type_k=q4_0", "--cache-type-k", "q4_0"),
        ("server.cache_type_v=q8_0", "--cache-type-v", "q8_0"),
    ],
)
def test_each_server_factor_reaches_the_command_line(
    compose_cfg: Compose, override: str, flag: str, value: str
) -> None:
    assert _flag(_plan(compose_cfg(override)), flag) == value


def test_kv_unified_is_a_switch(compose_cfg: Compose) -> None:
    on = _plan(compose_cfg("server.kv_unified=true"))
    off = _plan(compose_cfg("server.kv_unified=false"))
    assert "--kv-unified" in on and "--no-kv-unified" not in on
    assert "--no-kv-unified" in off and "--kv-unified" not in off


def test_quantized_v_cache_without_flash_attention_is_refused(compose_cfg: Compose) -> None:
    with pytest.raises(UserError, match="flash attention"):
        _plan(compose_cfg("server.cache_type_v=q8_0", "server.flash_attn=off"))
    # auto lets llama.cpp switch flash attention on for it.
    assert _flag(_plan(compose_cfg("server.cache_type_v=q8_0")), "--flash-attn") == "auto"
    _plan(compose_cfg("server.cache_type_k=q8_0", "server.flash_attn=off"))


def _call(text: str | None = None, messages: tuple[dict[str, str], ...] | None = None) -> Call:
    return Call("u0", 0, "r", None, text, messages, 8, 4, None, 1)


def test_a_prompt_without_its_length_is_bounded_by_its_bytes(compose_cfg: Compose) -> None:
    """fit sizes a call that records no prompt length by its UTF-8 bytes (a text call: its
    BOS and EOS beside; a chat call: the template allowance), never below a recorded one."""
    cfg = compose_cfg()
    naive = "naïve"  # 6 bytes, 5 characters: the bound counts bytes
    assert byte_bound(_call(text=naive)) == 6 + TEXT_ALLOWANCE
    chat = _call(messages=({"role": "user", "content": naive}, {"role": "system", "content": "ab"}))
    assert byte_bound(chat) == 8 + TEMPLATE_ALLOWANCE + 2 * MESSAGE_ALLOWANCE
    assert byte_bound(_call()) is None
    units = [Unit("u0", (_call(text=naive), chat))]
    assert longest_prompt(cfg, units, "fx") == 8 + TEMPLATE_ALLOWANCE + 2 * MESSAGE_ALLOWANCE
    # A call with neither a length nor its text cannot be fitted: one sentence naming the fix.
    with pytest.raises(UserError, match=r"server\.ctx_policy=fixed server\.ctx=N"):
        longest_prompt(cfg, [Unit("u0", (_call(),))], "fx")
    # A fixed context needs no length at all.
    fixed = compose_cfg("server.ctx_policy=fixed", "server.ctx=1024")
    assert longest_prompt(fixed, [Unit("u0", (_call(),))], "fx") == 0


def _gguf(path: Path, context_length: int) -> Path:
    """A GGUF file whose metadata says what a real model's says about its context."""
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(context_length)
    w.add_block_count(1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_a_gguf_files_trained_context_is_read_from_its_metadata(tmp_path: Path) -> None:
    assert trained_context(_gguf(tmp_path / "m.gguf", 2048)) == 2048
    (tmp_path / "not.gguf").write_bytes(b"not a model")
    assert trained_context(tmp_path / "not.gguf") is None
    assert trained_context(tmp_path / "missing.gguf") is None


def test_a_fit_beyond_a_real_models_trained_context_is_refused(
    compose_cfg: Compose, tmp_path: Path
) -> None:
    """A hostile user's review: server.ctx_policy=fit sized each slot for the workload however
    short the model's trained context (a real GGUF's <arch>.context_length)."""
    model = _gguf(tmp_path / "real.gguf", 2048)
    cfg = compose_cfg("model=tiny-moe", f"model.path={model}", "slots=8")
    engine = LlamaCpp(cfg)
    target = Target(workload="w", cap=64, port=4321, alias="benchkit-x", scratch=tmp_path)
    build = Build("b", ("/x/llama-server",), None)

    def units(prompt: int) -> list[Unit]:
        call = Call("u0", 0, "r", None, "x", None, 64, 8, prompt, 1)
        return [Unit("u0", (call,))]

    with pytest.raises(UserError) as e:
        engine.plan(build, Models(path=str(model)), units(2000), target=target)
    said = str(e.value)
    assert said.startswith("Each slot needs 2064 tokens of context")
    assert "model tiny-moe was trained for 2048" in said.replace(cfg.model.name, "tiny-moe")
    assert "workload.cap" in said and "--rope-scaling" in said and "\n" not in said
    # Where each slot fits, the total over 8 slots (8 x 2048) may exceed it: nothing changes.
    fits = engine.plan(build, Models(path=str(model)), units(1900), target=target)
    assert fits.spec.ctx_per_slot == 2048 and fits.spec.ctx_total == 8 * 2048
    # The user's own RoPE scaling, or a context they fixed themselves, is theirs to choose.
    for more in (
        ["server.extra_args=[--rope-scaling,yarn]"],
        ["server.ctx_policy=fixed", "server.ctx=32768"],
    ):
        own = LlamaCpp(compose_cfg("model=tiny-moe", f"model.path={model}", "slots=8", *more))
        own.plan(build, Models(path=str(model)), units(2000), target=target)


def test_the_default_study_fits_its_models_trained_context(
    compose_cfg: Compose, tmp_path: Path
) -> None:
    """The default study's model is written by benchkit with its recipe's ctx_train as its
    context_length (models.synthetic): read from such a file, it still holds the default
    workload's every slot."""
    from benchkit.workload.model import load_workload

    cfg = compose_cfg()
    assert cfg.model.synthetic is not None and cfg.server.ctx_policy.value == "fit"
    work = load_workload(cfg.workload.fixture)
    model = _gguf(tmp_path / "synth.gguf", cfg.model.synthetic.ctx_train)
    real = compose_cfg(f"model.path={model}")
    target = Target(workload=work.name, cap=cfg.workload.cap or work.cap, port=1, alias="a",
                    scratch=tmp_path)  # fmt: skip
    launch = LlamaCpp(real).plan(
        Build("b", ("/x/llama-server",), None), Models(path=str(model)), list(work.units),
        target=target,
    )  # fmt: skip
    assert launch.spec.ctx_per_slot <= cfg.model.synthetic.ctx_train
