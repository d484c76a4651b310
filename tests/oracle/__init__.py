"""Independent test oracles (second implementations written from docs/design.md)."""
