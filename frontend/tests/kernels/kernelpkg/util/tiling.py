"""Row tiles of a tensor, with Python's private-by-convention names (`self._rows`, `_span`,
`super()._span`) as nki-library's helpers use them."""

from kernelpkg.util.factors import TILE_ROWS


class Tiler:
    def _span(self, i):
        return slice(i * self._tile, (i + 1) * self._tile)


class RowTiler(Tiler):
    def __init__(self, rows):
        self._rows = rows
        self._tile = TILE_ROWS

    def count(self):
        return self._rows // self._tile

    def _span(self, i):
        return super()._span(i)

    def rows(self, i):
        return self._span(i)
