"""Persistence: SQLAlchemy models, repositories, bulk COPY helpers and the engine."""
