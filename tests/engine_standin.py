"""A stand-in for `vllm serve` / `python -m sglang.launch_server` in the job-wiring test.

Neither engine runs on a CPU machine, so this proves only benchkit's side of an engine job:
the process it starts from the engine's command line, the environment (API key in the
environment, never argv), the identity check through /v1/models and /server_info, the replay,
and /metrics read back under llama-server's keys. It is bench/scripted_server.py answering
with the served model name and slot count taken from the engine's flags, plus the engine's
/server_info and /metrics. It proves nothing about vLLM or SGLang themselves.

    python tests/engine_standin.py vllm MODEL --served-model-name A --port P --max-num-seqs N
    python tests/engine_standin.py sglang --model-path M --served-model-name A --port P ...

STANDIN_ARGS_OUT=FILE writes argv and whether VLLM_API_KEY was set; STANDIN_SLOTS_OFF=K
reports K more sequences than asked (a server that is not the job's).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import scripted_server as ss


def _flag(argv: list[str], name: str, default: str | None = None) -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == name:
            return argv[i + 1]
    return default


def main() -> int:
    engine, argv = sys.argv[1], sys.argv[2:]
    slots_flag = "--max-num-seqs" if engine == "vllm" else "--max-running-requests"
    slots = int(_flag(argv, slots_flag, "1") or 1) + int(os.environ.get("STANDIN_SLOTS_OFF", 0))
    alias = _flag(argv, "--served-model-name", "standin") or "standin"
    out = os.environ.get("STANDIN_ARGS_OUT")
    if out:
        Path(out).write_text(
            json.dumps({"argv": argv, "vllm_api_key_set": "VLLM_API_KEY" in os.environ})
        )
    plain = ss.Conn._plain

    def _plain(self: Any, method: str, path: str, body: bytes) -> bytes:
        route = path.split("?", 1)[0]
        if route == "/server_info":
            if engine == "vllm":
                sched = {"max_num_seqs": slots}
                info: dict[str, Any] = {"vllm_config": {"scheduler_config": sched}}
            else:
                info = {"max_running_requests": slots, "api_key": "never-recorded"}
            return ss._response(200, json.dumps(info).encode())
        if route == "/metrics":
            recs = self.state.records
            done = len([r for r in recs if r.completed])
            gen = sum(r.tokens for r in recs)
            prompt = sum(r.prompt_tokens for r in recs)
            prefix = "vllm:" if engine == "vllm" else "sglang:"
            lab = f'{{model_name="{alias}"}}'
            text = f"{prefix}generation_tokens_total{lab} {gen}\n"
            text += f"{prefix}prompt_tokens_total{lab} {prompt}\n"
            if engine == "vllm":
                done_lab = f'{{finished_reason="length",model_name="{alias}"}}'
                text += f"vllm:request_success_total{done_lab} {done}\n"
            return ss._response(200, text.encode(), b"text/plain; version=0.0.4")
        result: bytes = plain(self, method, path, body)
        return result

    ss.Conn._plain = _plain  # type: ignore[method-assign]
    init = ss.State.__init__

    def _state(self: Any, alias: str, slots: int) -> None:
        init(self, alias, slots)
        self.script = ss.Script(ttft_ms=5.0, itl_ms=1.0)  # fast: only the wiring is tested

    ss.State.__init__ = _state  # type: ignore[method-assign]
    host = _flag(argv, "--host", "127.0.0.1") or "127.0.0.1"
    port = int(_flag(argv, "--port", "8000") or 8000)
    asyncio.run(ss.serve(host, port, alias, slots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
