"""Reading and writing corpora and releases (files and streams), outside the pure core."""
