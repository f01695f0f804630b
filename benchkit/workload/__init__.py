"""Workload fixtures: the format's types, the validating loader and token materialisation."""

from __future__ import annotations

from benchkit.workload.model import Call, Segment, Unit, Workload, load_workload, token_ids

__all__ = ["Call", "Segment", "Unit", "Workload", "load_workload", "token_ids"]
