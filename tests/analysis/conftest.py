"""The API tests' client fixture, for the reader's end-to-end test of the service."""

from tests.api.conftest import client

__all__ = ["client"]
