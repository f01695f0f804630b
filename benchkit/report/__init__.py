"""Analyse results and render the write-up (`python -m benchkit.report DIR`).

Grouped by role into layers, lowest first, each a package that imports only its own layer or
a lower one (tests/unit/report/test_import_layers.py): `lang` (the languages and the words),
`analysis` (results read, the numbers the verdicts judge), `verdicts` (a package per kind, what
kinds share, and the runs of every verdict), `ledger` (corrections between publications) and
`writeup` (the view, the pages and `render`)."""
