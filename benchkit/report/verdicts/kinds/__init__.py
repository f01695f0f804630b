"""The verdict kinds, one package each (its computation, its words, its `KIND`); the registry
that orders them is `benchkit.report.verdicts.registry`."""
