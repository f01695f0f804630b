"""Output drift beside every speed verdict: `probe` asks each job's server a fixed probe set
after its timed replay; `drift` compares every job's answers with a reference job's."""
