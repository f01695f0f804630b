"""The client side of a job: replay a workload against the server and record every call.

`replay` runs the workers and writes the call records; `transport` carries a worker's calls on
its own HTTP/1.1 connection with the kernel's receive time of every chunk; `stream` reads an
OpenAI-compatible event stream (framing and folding into a record), for the replay and for the
recording proxy (benchkit.workload.record) alike.
"""
