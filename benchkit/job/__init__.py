"""One job end to end: its run, the result it assembles, its folder, a run extended, its
telemetry and counters, and where its sweep stands."""
