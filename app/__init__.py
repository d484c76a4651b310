"""Serialpub: privacy-preserving serial publication of transactional data."""
