"""Repositories: queries per domain. They ``flush()`` but never commit (Polar)."""
