"""Request and response bodies (API.md), with examples for the OpenAPI document."""
