"""benchkit: declarative LLM-serving tuning sweeps on a real llama-server, written up honestly."""

__version__ = "0.1.0"
