"""The series parameter ``semantic_audit`` (design.md §11, docs/api.md ``params``): whether each
publication job attacks its release, with what, and against which background corpus.

Kept apart from :mod:`app.core.params` on purpose: the audit is not a parameter of any
method (it never changes what is published), so it validates and echoes on its own and a
method's parameter set stays what the method reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.core.attacks.audit import AuditParams
from app.core.attacks.mixture_risk import DEFAULT_DRAWS
from app.core.attacks.selection import SELECTIONS, Selection
from app.core.errors import InvalidParameter

__all__ = [
    "BACKGROUNDS",
    "SCORINGS",
    "MAX_MIXTURE_DRAWS",
    "AuditSettings",
    "Background",
    "Scoring",
    "parse_audit_settings",
]

Scoring = Literal["ngd", "embedding"]
Background = Literal["published", "uploaded"]
#: ``ngd``: offline NGD (formula 4.1) only; ``embedding``: skip-gram embeddings as well
#: (NGD stays, it is cheap and the comparison is the point).
SCORINGS: tuple[Scoring, ...] = ("ngd", "embedding")
#: ``published``: the series' own public rows (what every analyst holds); ``uploaded``: a
#: corpus an admin or the series' publisher uploaded (``PUT /v1/series/{name}/background``).
BACKGROUNDS: tuple[Background, ...] = ("published", "uploaded")
_KEYS = ("enabled", "scoring", "selection", "background", "seed", "window", "mixture_draws")
#: Most hypotheses the Bayesian adversary may draw per release: each is one assessment of the
#: series so far.
MAX_MIXTURE_DRAWS = 256
_PREFIX = "params.semantic_audit"


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """Effective ``semantic_audit`` of a series.

    ``selection``: the selection methods run (thesis 4.3; the random baseline always runs);
    ``seed``: ``None`` takes the series' ``seed``; ``window``: the skip-gram context window;
    ``mixture_draws``: hypotheses the frequency section's Bayesian adversary draws
    (:mod:`~app.core.attacks.mixture_risk`; 0 leaves it out: each draw is one assessment
    of the series so far).
    """

    enabled: bool = False
    scoring: Scoring = "ngd"
    selection: tuple[Selection, ...] = SELECTIONS
    background: Background = "published"
    seed: int | None = None
    window: int = 5
    mixture_draws: int = DEFAULT_DRAWS

    def as_dict(self) -> dict[str, Any]:
        """The JSON echoed in the series' ``params`` and kept with each report.

        >>> AuditSettings().as_dict()["selection"]
        ['aba', 'mra', 'rga']
        """
        return {
            "enabled": self.enabled,
            "scoring": self.scoring,
            "selection": list(self.selection),
            "background": self.background,
            "seed": self.seed,
            "window": self.window,
            "mixture_draws": self.mixture_draws,
        }

    def audit_params(self, series_seed: int) -> AuditParams:
        """The core's :class:`~app.core.attacks.audit.AuditParams` for these settings."""
        return AuditParams(
            selections=self.selection,
            embeddings=self.scoring == "embedding",
            window=self.window,
            seed=series_seed if self.seed is None else self.seed,
        )


def _fail(key: str, why: str) -> InvalidParameter:
    return InvalidParameter(f"{_PREFIX}.{key}: {why}", {"param": f"semantic_audit.{key}"})


def _selection(value: Any) -> tuple[Selection, ...]:
    if value == "all":
        return SELECTIONS
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or any(v not in SELECTIONS for v in values):
        raise _fail(
            "selection",
            f"must be 'all', one of {', '.join(SELECTIONS)} or a non-empty list of them",
        )
    # Canonical order, no repeats: the report's keys do not depend on how the list was typed.
    return tuple(s for s in SELECTIONS if s in values)


def parse_audit_settings(raw: Any) -> AuditSettings:
    """Validate the ``semantic_audit`` parameter; ``None`` (absent) is disabled.

    ``true``/``false`` is shorthand for ``{"enabled": ...}``; an object enables the audit
    unless it says ``"enabled": false`` (giving settings means wanting the audit).

    >>> parse_audit_settings({"selection": "mra"}).selection
    ('mra',)
    >>> parse_audit_settings(None).enabled
    False
    """
    if raw is None:
        return AuditSettings()
    if isinstance(raw, bool):
        return AuditSettings(enabled=raw)
    if not isinstance(raw, Mapping):
        raise InvalidParameter(
            f"{_PREFIX}: must be true, false or an object", {"param": "semantic_audit"}
        )
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise _fail(unknown[0], f"not a setting of the audit; it takes {', '.join(_KEYS)}")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _fail("enabled", "must be true or false")
    scoring = raw.get("scoring", "ngd")
    if scoring not in SCORINGS:
        raise _fail("scoring", f"must be one of {', '.join(SCORINGS)}")
    background = raw.get("background", "published")
    if background not in BACKGROUNDS:
        raise _fail("background", f"must be one of {', '.join(BACKGROUNDS)}")
    seed = raw.get("seed")
    if seed is not None and (
        not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63
    ):
        raise _fail("seed", "must be a non-negative 63-bit integer or null")
    window = raw.get("window", 5)
    if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= 1000:
        raise _fail("window", "must be an integer between 1 and 1000")
    draws = raw.get("mixture_draws", DEFAULT_DRAWS)
    if not isinstance(draws, int) or isinstance(draws, bool) or not 0 <= draws <= MAX_MIXTURE_DRAWS:
        raise _fail("mixture_draws", f"must be an integer between 0 and {MAX_MIXTURE_DRAWS}")
    return AuditSettings(
        enabled=enabled,
        scoring=scoring,
        background=background,
        selection=_selection(raw.get("selection", "all")),
        seed=seed,
        window=window,
        mixture_draws=draws,
    )
