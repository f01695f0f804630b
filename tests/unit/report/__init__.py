"""Tests mirroring benchkit/report."""
