"""Serialpub: privacy-preserving serial publication of transactional data.

Importing any part of ``app`` registers the publication methods (:mod:`app.methods`) into the
core's registry (:mod:`app.core.methods`), which imports nothing above itself.
"""

import app.methods  # noqa: F401  (registers every method)
