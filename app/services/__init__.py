"""Services: the use cases, shared by the HTTP API, the job worker and the CLI."""
