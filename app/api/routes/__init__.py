"""Routers, one module per domain."""
