"""The HTTP API (API.md)."""
