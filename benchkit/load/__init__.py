"""Open-loop load: the arrival schedule, the replayer that keeps to it, a job's open-loop passes
and their own metrics."""
