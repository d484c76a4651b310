"""Independent test oracles (second implementations written from SPEC.md)."""
