"""Constants the helpers share (one private to the package: scale.py imports it by name)."""

TILE_ROWS = 128
_SCALE = 2.0
SCALE = _SCALE
