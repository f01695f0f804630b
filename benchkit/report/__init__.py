"""Analyse results and render the write-up (`python -m benchkit.report DIR`)."""
