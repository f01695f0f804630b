"""The server side of a job, in the order a job uses it:

`plan` (pure: the command line, context size, replay spec) · `source`, `build`, `vulkan`,
`provide` (llama-server from the pinned source, and the model file) · `engines` (vLLM and
SGLang command lines) · `engine` (one interface over llama-server, vLLM, SGLang and an
external server) · `serve` (start a server, prove it is the job's, stop it) · `metrics`
(its `/metrics` counters).
"""
