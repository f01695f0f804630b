"""benchkit's Hydra sweeper plugins: `hydra/sweeper=racing` (racing_sweeper.py)."""
