"""Request and response bodies (docs/api.md), with examples for the OpenAPI document."""
