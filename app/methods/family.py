"""The declaration shape the six Anony-family methods share: :class:`PublishParams`, parsed
and echoed by the parameters each reads, assessed at its ``r_th``."""

from __future__ import annotations

from typing import Any

from app.core.params import PublishParams, parse_params
from app.core.randomness import randomness_source
from app.methods.base import Method, lazy_publisher

__all__ = ["anony_family"]


def anony_family(
    name: str,
    rank: int,
    parameters: tuple[str, ...],
    publisher: str,
    *,
    individuals: str = "ignored",
    storage: str | None = None,
    summary: str = "",
) -> Method:
    """A method publishing Anony-style rows with :class:`PublishParams`.

    ``publisher`` is the ``"module:function"`` of its core function.
    """

    def parse(raw: Any) -> PublishParams:
        return parse_params(name, raw)

    def echo(params: PublishParams) -> dict[str, Any]:
        # ``seed`` is never echoed: whoever knows it replays every random choice of the
        # release and finds its counterfeits (app.core.randomness). Analysts learn only
        # where the randomness came from.
        echoed = params.select([p for p in parameters if p != "seed"])
        if "seed" in parameters:
            echoed["randomness"] = randomness_source(params.seed)
        return echoed

    def risk_threshold(params: PublishParams) -> float:
        return params.r_th

    return Method(
        name=name,
        rank=rank,
        parameters=parameters,
        parse=parse,
        echo=echo,
        publish=lazy_publisher(publisher),
        modules=(publisher.partition(":")[0],),
        individuals=individuals,
        risk_threshold=risk_threshold,
        storage=storage,
        summary=summary,
    )
