"""Publication methods, one package each, found by :mod:`app.methods.registry`.

A method's package declares a :class:`~app.methods.base.Method` named ``METHOD`` in its
``__init__``: its parameters (parse and echo), its publish function (a pure core function), the
rank it is listed at, and, as dotted paths, its storage (private state kept between releases,
public layout kept beside the release) and the OpenAPI schema of its public release. The
declaration itself imports only :mod:`app.core`, so that the core's pipeline and the compute
child can read it without the database or web stack; the paths are resolved by the services
that need them.
"""
