"""Adaptive sweeps ("racing"): stop measuring the points that are already decided."""
