"""The adversary's risk model (design.md §4; sections 2.3-2.4, formulas 5-15).

``state`` holds the series and its row index, ``overlap`` the overlaps and s-ranges, ``likelihood``
and ``posterior`` formulas 12-14, ``assess`` the serial risk of every row (15).
"""
