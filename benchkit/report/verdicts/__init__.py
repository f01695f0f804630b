"""The verdicts a report gives: one package per kind under `kinds/` (backend, slots, drafting,
repeats, projection, validity, builds, capacity, claim, any factor), each computing its verdicts
over a `sweep.Sweep` and saying them, registered in `registry`; what kinds share (`common`,
`kind`, `engine_of`, `exercise`, `light`, the sentences, reasons and words they are said with,
the figures' helpers); and `analyse` and `folder`, which run every verdict over a sweep and a
results folder. It imports the analysis and the language layer, never the ledger or the
write-up."""
