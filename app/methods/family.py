"""The declaration shape the six Anony-family methods share: :class:`PublishParams`, parsed
and echoed by the parameters each reads, assessed at its ``r_th``."""

from __future__ import annotations

from typing import Any

from app.core.params import PublishParams, parse_params
from app.methods.base import Method, lazy_publisher

__all__ = ["anony_family"]


def anony_family(name: str, rank: int, parameters: tuple[str, ...], publisher: str, *,
                 individuals: str = "ignored", storage: str | None = None,
                 summary: str = "") -> Method:
    """A method publishing Anony-style rows with :class:`PublishParams`.

    ``publisher`` is the ``"module:function"`` of its core function.
    """

    def parse(raw: Any) -> PublishParams:
        return parse_params(name, raw)

    def echo(params: PublishParams) -> dict[str, Any]:
        return params.select(parameters)

    def risk_threshold(params: PublishParams) -> float:
        return params.r_th

    return Method(
        name=name, rank=rank, parameters=parameters, parse=parse, echo=echo,
        publish=lazy_publisher(publisher), modules=(publisher.partition(":")[0],),
        individuals=individuals, risk_threshold=risk_threshold, storage=storage,
        summary=summary,
    )
