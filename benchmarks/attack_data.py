"""Corpora for the semantic-attack benchmark (``benchmarks/attacks.py``, design.md §11).

Each corpus is split in two by document: a *background* part the attacker learns from and a
*published* part the publisher releases, so the attacker never trains on what it attacks.

- ``LEE``: the Lee news corpus shipped in the gensim wheel (``lee_background.cor``, 300
  articles): one sentence a transaction, tokens by ``gensim.utils.simple_preprocess``,
  gensim's stop words dropped; articles alternate between background and published.
- ``WIKI``: ``head500.noblanks.cor`` (250 Wikipedia articles, already stemmed, no sentence
  marks): each article cut into windows of 15 tokens, one window a transaction (stop words
  dropped); articles alternate likewise.
- ``B1``, ``B2``: BMS-WebView-1 and -2 (click-stream ids, FIMI lines, read in place from
  ``--data``): only co-occurrence; transactions alternate between the two parts.

Every published transaction gets a unique individual ``p<position>`` (Wong and Inv need one,
and the attack's ground truth traces rows through them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.core.model import Transaction
from app.io.corpus import read_corpus

__all__ = ["AttackCorpus", "load", "TEXT_CORPORA", "CLICK_CORPORA"]

TEXT_CORPORA = ("LEE", "WIKI")
CLICK_CORPORA = ("B1", "B2")
_WINDOW = 15
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class AttackCorpus:
    """A corpus split for an attack: what the attacker knows, what the publisher releases."""

    name: str
    background: list[list[str]]  # token sequences (order kept for the embeddings' window)
    published: list[Transaction]
    has_meaning: bool


def _gensim_data(name: str) -> Path:
    import gensim

    return Path(gensim.__file__).parent / "test" / "test_data" / name


def _tokens(text: str) -> list[str]:
    from gensim.parsing.preprocessing import STOPWORDS
    from gensim.utils import simple_preprocess

    return [t for t in simple_preprocess(text, min_len=3) if t not in STOPWORDS]


def _documents(name: str) -> list[list[list[str]]]:
    """Per article, its transactions as token lists (order kept)."""
    lines = _gensim_data(name).read_text(encoding="utf-8").splitlines()
    articles = [line for line in lines if line.strip()]
    if name == "lee_background.cor":
        return [[_tokens(s) for s in _SENTENCE.split(a)] for a in articles]
    out = []
    for article in articles:
        words = _tokens(article)
        out.append([words[i : i + _WINDOW] for i in range(0, len(words), _WINDOW)])
    return out


def _split_documents(name: str, corpus: str) -> AttackCorpus:
    documents = _documents(name)
    background = [s for d in documents[0::2] for s in d if s]
    published_sets = [set(s) for d in documents[1::2] for s in d if s]
    published = [Transaction.of(s, f"p{i}") for i, s in enumerate(published_sets)]
    return AttackCorpus(corpus, background, published, has_meaning=True)


def load(name: str, data: Path) -> AttackCorpus:
    """The corpus ``name`` (``LEE``, ``WIKI``, ``B1``, ``B2``) split for the attack."""
    if name == "LEE":
        return _split_documents("lee_background.cor", name)
    if name == "WIKI":
        return _split_documents("head500.noblanks.cor", name)
    file = {"B1": "bms-webview-1.dat", "B2": "bms-webview-2.dat"}[name]
    rows = read_corpus(data / file)
    background = [sorted(t.terms) for t in rows[0::2]]
    published = [Transaction.of(t.terms, f"p{i}") for i, t in enumerate(rows[1::2])]
    return AttackCorpus(name, background, published, has_meaning=False)
