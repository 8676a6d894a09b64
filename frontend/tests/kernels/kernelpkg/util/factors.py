"""Constants the helpers share."""

TILE_ROWS = 128
SCALE = 2.0
