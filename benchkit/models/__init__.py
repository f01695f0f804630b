"""Model files a job runs: synthetic GGUF models benchkit writes itself, and draft models.

`recipe` names a synthetic model's shapes (the config's `model.synthetic` is a recipe),
`synthetic` writes it as a GGUF file into the cache, `draft` provides the draft model that
`spec=draft` starts llama-server with.
"""
