"""The server side of a job, in the order a job uses it:

`plan` (pure: the command line, context size, replay spec) · `source`, `build`, `vulkan`,
`provide` (llama-server from the pinned source, and the model file) · `vllm_sglang` (vLLM's
and SGLang's command lines) · `engines` (the Engine interface, one class per engine:
llama-server, vLLM and SGLang, an external server) · `serve` (start a server, prove it is the
job's, stop it) · `metrics` (its `/metrics` counters).
"""
