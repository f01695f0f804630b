"""The one comparison engine under every verdict: observations of points per unit and per
machine (`engine.Series`), comparisons between two points with their own interval and decision
(`engine.Comparison`, `engine.Engine`), and the questions verdicts ask of them (`questions`).

It imports nothing of the report or the race, so both can ask it the same thing."""
