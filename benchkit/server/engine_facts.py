"""What benchkit knows of vLLM and SGLang, read in their own sources at ENGINE_VERSIONS (the
files in ENGINE_SOURCES): the engines' names, the llama.cpp settings neither has, the model
families each drafts MTP for, and the KV cache dtypes each accepts. benchkit/server/
vllm_sglang.py turns a job's config into their command lines with these.
"""

from __future__ import annotations

from enum import StrEnum

from benchkit.config.schema import CacheType


class EngineName(StrEnum):
    """The engines benchkit starts that are not llama-server."""

    vllm = "vllm"
    sglang = "sglang"


# The releases whose argument parsers and metric definitions were read for this module.
ENGINE_VERSIONS: dict[EngineName, str] = {EngineName.vllm: "0.34.0", EngineName.sglang: "0.5.23"}
# Where, inside those releases' wheels (PyPI), each name was checked.
ENGINE_SOURCES: dict[EngineName, tuple[str, ...]] = {
    EngineName.vllm: (
        "vllm/engine/arg_utils.py",  # --max-num-seqs, --max-model-len, --kv-cache-dtype, ...
        "vllm/entrypoints/common/cli_args.py",  # --host, --port, --api-key
        "vllm/entrypoints/serve/middleware/register.py",  # VLLM_API_KEY when no --api-key
        "vllm/config/speculative.py",  # method names, synthetic rejection sampling
        "vllm/config/cache.py",  # CacheDType
        "vllm/v1/metrics/loggers.py",  # vllm:* metrics, labels model_name and engine
        "vllm/v1/spec_decode/metrics.py",  # vllm:spec_decode_*
        "vllm/entrypoints/serve/dev/server_info/api_router.py",  # /server_info (dev mode)
        "vllm/entrypoints/serve/engine/protocol.py",  # /v1/models ModelCard
    ),
    EngineName.sglang: (
        "sglang/srt/arg_groups/arg_utils.py",  # field name -> --flag-name
        "sglang/srt/arg_groups/fields/schedule.py",  # max_running_requests, chunked_prefill
        "sglang/srt/arg_groups/fields/model.py",  # model_path, context_length, kv_cache_dtype
        "sglang/srt/arg_groups/fields/serving.py",  # host, port, api_key, served_model_name
        "sglang/srt/arg_groups/fields/spec.py",  # speculative_*
        "sglang/srt/arg_groups/fields/observability.py",  # enable_metrics
        "sglang/srt/arg_groups/speculative_hook.py",  # NEXTN = EAGLE, STANDALONE, NGRAM
        "sglang/srt/utils/server_args_config_parser.py",  # --config YAML
        "sglang/srt/speculative/spec_utils.py",  # SGLANG_SIMULATE_ACC_LEN
        "sglang/srt/observability/metrics_collector.py",  # sglang:* metrics and labels
        "sglang/srt/entrypoints/http_server.py",  # /v1/models, /server_info
        "sglang/srt/managers/scheduler_components/internal_state.py",  # effective slots
    ),
}

ENGINE_LABEL: dict[EngineName, str] = {EngineName.vllm: "vLLM", EngineName.sglang: "SGLang"}

# Settings that tune llama.cpp itself and have no counterpart in either engine: not passed.
IGNORED_SETTINGS = (
    "server.ubatch (llama.cpp's physical batch)",
    "server.threads (CPU threads)",
    "server.kv_unified (both engines always share one paged KV pool)",
    "backend.n_gpu_layers (the whole model is on the GPU)",
    "server.flash_attn=auto/on (each engine picks its attention kernels)",
)

# mtp=true: the model families whose MTP (NextN) layers each engine drafts with, keyed by
# model.architecture as llama.cpp (GGUF) or Hugging Face (config.json model_type) names it.
# The value is vLLM's family name; vLLM 0.34 takes "mtp" for all of them and rewrites the
# family names to it (config/speculative.py), SGLang takes NEXTN and picks the draft
# architecture from the checkpoint (configs/model_config.py).
MTP_FAMILIES: dict[str, str] = {
    "deepseek2": "deepseek_mtp",
    "deepseek_v3": "deepseek_mtp",
    "deepseek_v32": "deepseek_mtp",
    "glm4moe": "glm4_moe_mtp",
    "glm4_moe": "glm4_moe_mtp",
    "qwen3next": "qwen3_next_mtp",
    "qwen3_next": "qwen3_next_mtp",
    "qwen35": "qwen3_5_mtp",
    "qwen35moe": "qwen3_5_mtp",
    "qwen3_5": "qwen3_5_mtp",
    "qwen3_5_moe": "qwen3_5_mtp",
    "ernie4_5-moe": "ernie_mtp",
    "ernie4_5_moe": "ernie_mtp",
}

# --kv-cache-dtype choices at ENGINE_VERSIONS (vllm/config/cache.py CacheDType;
# sglang/srt/arg_groups/fields/model.py kv_cache_dtype choices).
KV_CACHE_DTYPES: dict[EngineName, tuple[str, ...]] = {
    EngineName.vllm: (
        "auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc",
        "fp8_ds_mla", "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc",
        "turboquant_k3v4_nc", "turboquant_3bit_nc", "octave_k3v4", "octave_k3v3",
        "octave_k3v3_compact", "ultraquant_4bit", "int4_per_token_head",
        "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
    ),
    EngineName.sglang: (
        "auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4",
        "fp4_mx_block16",
    ),
}  # fmt: skip

# server.cache_type_k/v -> --kv-cache-dtype. f16 is llama.cpp's unquantized default; the
# engines' unquantized default is the model's own 16-bit dtype (auto), and SGLang has no
# float16 choice, so f16 means auto for both.
CACHE_DTYPE: dict[CacheType, str] = {CacheType.f16: "auto", CacheType.bf16: "bfloat16"}
