"""Anonymisation of one corpus on its own: clustering and Anony (design.md §2; section 2.2)."""
