"""``python -m app`` runs the ``serialpub`` command line."""

from app.cli import main

main()
