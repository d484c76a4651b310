"""The mechanism's randomness: secret, keyed streams that nothing public determines.

A mechanism's random choices (refining order, counterfeit rows and terms, the placement of
counterfeits among a cluster's rows, Kanony's bag, Inv's values, Wong's groups) are part of its
secret: before the shuffle the counterfeits are a cluster's last rows, so anyone who can replay
the shuffle finds every one of them (98 of 98 replayed from a release that printed
its seed). So every such choice comes from a :class:`KeyedRandom`, a stream of SHAKE-256 output
under a *release key* (:func:`release_key`), and the key is

* a secret drawn per release from the operating system's CSPRNG (:func:`draw_secret`, by the
  service and ``publish-local`` when the publisher gives no ``seed``), kept only in the private
  ledger so that the publisher can reproduce the release; or
* derived from a publisher-given ``seed`` (tests, benchmarks): reproducible by anyone who knows
  the seed, which is why the service warns and never prints it.

Each purpose (``"shuffle"``, ``"counterfeit"``, …) draws from its own stream (the purpose is
hashed into the key), so adding a draw to one step does not move another step's choices.

Python's ``random.Random`` (MT19937) is not used for the mechanism: its state follows from
624 consecutive outputs, and its string seeding is public knowledge. SHAKE-256 is an
extendable-output function of SHA-3 (FIPS 202): without the key its output cannot be told
from uniform, whatever else the adversary knows (the purpose, the release number, the rows).
"""

from __future__ import annotations

import hashlib
import random
import secrets
import struct
from collections.abc import Iterator

from app.core.errors import WarningCode

__all__ = [
    "SECRET_BYTES",
    "KeyedRandom",
    "draw_secret",
    "mechanism_random",
    "randomness_record",
    "randomness_source",
    "release_key",
    "seed_warning",
]

#: Bytes of secret per release (256 bits).
SECRET_BYTES = 32

#: 64-bit words drawn from SHAKE-256 per refill of a stream: the hashing is amortised (a
#: million-row shuffle refills about 120 times) and a stream that draws little (a small
#: release) costs one 64 KiB block.
_WORDS = 1 << 13
_TWO_64 = 1 << 64


def draw_secret() -> str:
    """A fresh release secret from the operating system's CSPRNG, as 64 hex digits."""
    return secrets.token_hex(SECRET_BYTES)


def release_key(seed: int | None, secret: str | None, release_no: int) -> str:
    """The key of release ``release_no``'s randomness.

    ``secret`` (drawn per release, private) wins; without it the publisher's ``seed`` (public
    to whoever was told it: tests and benchmarks only).
    """
    if secret:
        return f"secret:{secret}"
    return f"seed:{seed if seed is not None else 0}:{release_no}"


def mechanism_random(key: str, purpose: str) -> KeyedRandom:
    """The stream for ``purpose`` under ``key`` (:func:`release_key`)."""
    return KeyedRandom(key, purpose)


class KeyedRandom(random.Random):
    """``random.Random``'s interface over SHAKE-256(``purpose`` ‖ ``key`` ‖ block number).

    The stream is read as 64-bit words. ``random()`` takes 53 bits of a word;
    ``_randbelow(n)`` (behind ``shuffle``, ``sample``, ``randrange``) takes a word with
    rejection of the top ``2**64 mod n`` values, so every result is exactly uniform;
    ``getrandbits(k)`` takes ``ceil(k / 64)`` words. ``choices`` and the rest of
    ``random.Random`` are built on these. The same key and purpose give the same draws on
    every platform and Python version.
    """

    def __init__(self, key: str, purpose: str) -> None:
        self._seed_material = hashlib.sha256(f"{purpose}\x00{key}".encode()).digest()
        self._block = 0
        self._words: Iterator[int] = iter(())
        super().__init__(0)

    def seed(self, a: object = None, version: int = 2) -> None:
        """Ignored: the stream is fixed by its key (``random.Random.__init__`` calls it)."""

    def _word(self) -> int:
        """The next 64 uniform bits."""
        word = next(self._words, None)
        if word is None:
            block = hashlib.shake_256(self._seed_material + self._block.to_bytes(8, "big")).digest(
                _WORDS * 8
            )
            self._block += 1
            # One unpack per block: a draw is then a ``next`` on a tuple (a million-row
            # shuffle costs about twice MT19937's, not four times).
            self._words = iter(struct.unpack(f">{_WORDS}Q", block))
            word = next(self._words)
        return word

    def _randbelow(self, n: int) -> int:
        """A uniform integer in [0, n), for ``0 < n <= 2**64``."""
        if n > _TWO_64:
            return self.getrandbits(n.bit_length() + 64) % n  # bias below 2**-64
        limit = _TWO_64 - _TWO_64 % n
        word = self._word()
        while word >= limit:
            word = self._word()
        return word % n

    def getrandbits(self, k: int) -> int:
        """``k`` uniform bits from the stream."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        value, have = 0, 0
        while have < k:
            value, have = (value << 64) | self._word(), have + 64
        return value >> (have - k)

    def random(self) -> float:
        """A uniform float in [0, 1) with 53 random bits."""
        return (self._word() >> 11) * 1.1102230246251565e-16

    def getstate(self) -> tuple[int, ...]:
        # ``random.Random``'s state is the unused MT19937 underneath, which would restore
        # nothing of this stream: a keyed stream is recreated from its key instead.
        raise TypeError("a keyed stream is recreated from its key, not saved")

    def setstate(self, state: object) -> None:
        raise TypeError("a keyed stream is recreated from its key, not restored")


def randomness_source(seed: int | None) -> str:
    """What the public release says of its randomness: ``"secret"`` or ``"publisher_seed"``
    (never the seed itself)."""
    return "secret" if seed is None else "publisher_seed"


def randomness_record(seed: int | None, secret: str | None) -> dict[str, object]:
    """The private ledger's record of a release's randomness, enough to reproduce it."""
    if secret:
        return {"source": "secret", "secret": secret}
    return {"source": "publisher_seed", "seed": 0 if seed is None else seed}


def seed_warning(seed: int | None) -> dict[str, str] | None:
    """The warning a response carries when the publisher gave ``seed`` (``None`` without)."""
    if seed is None:
        return None
    return {
        "code": WarningCode.PUBLISHER_SEED,
        "message": "params.seed is set: every random choice of the release (which rows are "
        "counterfeits, where they sit, which terms they hold) follows from it, so anyone "
        "who learns the seed finds the counterfeits. Use a seed for tests and benchmarks "
        "only; without one each release draws a secret kept in its private ledger.",
    }
