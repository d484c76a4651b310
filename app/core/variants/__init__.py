"""The other methods of serial publication (design.md §§6-9): Wong's statistics file, Kanony, sComp,
and the m-invariance baseline Inv."""
