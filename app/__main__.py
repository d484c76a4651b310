"""``python -m app`` runs the ``serialpub`` command line."""

from app.cli import main

# Guarded: a process started by multiprocessing (spawn, fork server) may import this module
# again as ``__mp_main__``; it must not run the command line a second time.
if __name__ == "__main__":
    main()
