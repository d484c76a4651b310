"""How a term, label or pseudonym is documented in the OpenAPI document.

Validation is :mod:`app.io.terms` (it names the line or item, and the character at fault);
these types only tell clients, and schemathesis, what it accepts.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

from app.core.validation import MAX_TERM_LENGTH
from app.io.terms import term_pattern, text_pattern

__all__ = ["Term", "Text"]

Term = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TERM_LENGTH,
            "pattern": term_pattern(),
            "description": "Trimmed and NFC-normalised; no control, zero-width or format character",
        }
    ),
]

Text = Annotated[str, WithJsonSchema({"type": "string", "pattern": text_pattern()})]
