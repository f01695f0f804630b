"""What a job is asked to do: the config Hydra composes, every backend declared once, each
value checked, the space a sweep plans, drafting as a factor, an override that names nothing."""
