"""The web view's HTTP tests run on the API tests' shared application and fixtures."""

from tests.api.conftest import client, session  # noqa: F401 - fixtures
