"""Anonymisation of one corpus on its own: clustering and Anony (SPEC 2; section 2.2)."""
