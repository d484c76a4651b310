"""The other methods of serial publication (SPEC 6-9): Wong's statistics file, Kanony, sComp,
and the m-invariance baseline Inv."""
