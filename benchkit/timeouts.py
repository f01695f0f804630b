"""Every fixed timeout benchkit uses outside the study's own settings, in one place, each with
why it is that long. Per-job limits a user tunes (`server.stall_timeout_s`,
`server.job_deadline_s`, `server.start_timeout_s`) live in the config, not here."""

# A control request to the job's own server on loopback (/health, /props, /v1/models,
# /metrics, /server_info): a small JSON answer that a healthy server gives in milliseconds, so
# ten seconds only ever expires when the server is stuck.
CONTROL_S = 10.0
# A liveness probe while a call looks stalled or the server starts: short, since it is asked
# again and again.
PROBE_S = 5.0
# A tool's --version or a quick system query (git, glslc, nvidia-smi, ldd) answered from disk.
TOOL_S = 20.0
# Recording proxy: connecting to the upstream, and writing a request body to it. Reading is
# unbounded: the upstream decides how long a generation takes.
UPSTREAM_CONNECT_S = 10.0
UPSTREAM_WRITE_S = 60.0
# Server lifecycle (benchkit.server.serve). Whether anything listens on the port a job chose:
# a connect on loopback is refused or accepted at once, so half a second only runs out on a
# port a firewall swallows.
PORT_PROBE_S = 0.5
# How often /health is asked while a server starts: often enough that a ready server is used
# within a fifth of a second, rarely enough to cost nothing.
STARTUP_POLL_S = 0.2
# After SIGTERM, how long a server gets to exit before SIGKILL: llama-server frees its model in
# well under a second, vLLM and SGLang stop their worker processes in a few.
STOP_GRACE_S = 10.0
# `llama-server --version` and `--list-devices`: the latter starts every device backend the
# build has, and a GPU driver's first initialisation can take tens of seconds.
SERVER_PROBE_S = 60.0
# The replay's connection to the job's server: connecting (loopback or a LAN, so ten seconds
# only expires when nothing listens or the server is stuck), and writing one request body
# (a prompt of at most a few megabytes).
REPLAY_CONNECT_S = 10.0
REPLAY_WRITE_S = 60.0
# After `data: [DONE]` the raw path reads on to the end of the response so that the connection
# can carry the next call; llama-server ends it at once. A server that leaves it open longer
# loses the connection, not the call.
AFTER_DONE_S = 1.0
# Recording proxy at Ctrl-C: calls in flight get this long to finish (the --grace default: a
# typical agent call ends within it), then are cancelled, and their connections get
# RECORD_CANCEL_S to close.
RECORD_GRACE_S = 30.0
RECORD_CANCEL_S = 5.0
