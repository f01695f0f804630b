"""The report's analysis: the results read (the tidy table, each job's calls, builds, stalls,
caps, slot use and warm-up), the sweep every verdict reads with its numbers and the evidence
rules, the caveats, claims, quality drift, race and energy figures. It imports the language
layer (`report.lang`) and nothing of the verdicts, the ledger or the write-up."""
