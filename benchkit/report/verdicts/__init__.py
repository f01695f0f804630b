"""The verdicts a report gives, one module per kind (backend, slots, drafting, repeats,
projection, validity, builds), each a pure function over a `sweep.Sweep`."""
