"""The virtual-register calls of `nki.isa` (NKI 0.2-0.6): register_alloc, register_move,
register_load, register_store. A virtual register holds a run-time 32-bit scalar on an engine
sequencer, used for dynamic loop bounds (nl.dynamic_range, fori_loop, while_loop) and run-time
offsets (.ap(scalar_offset=reg)) (the 0.6 reference, nki/api/nki/isa/__init__.py at 81ce03ae).
ncverify's IR has no run-time scalar state (model/ir: loops have affine bounds, accesses affine
offsets, plus the indirect offsets a DMA reads from a tile), so each call is refused by name."""

from ..signatures import api, refuse

_WHY = ("a virtual register holds a run-time scalar (a dynamic loop bound or offset); the "
        "model's programs have no run-time scalar state (loop bounds and offsets are affine in "
        "shapes and loop variables)")


@api("nisa.register_alloc")
def register_alloc(x=None):
    refuse("nisa.register_alloc", "x", x, _WHY)


@api("nisa.register_move")
def register_move(dst, src):
    refuse("nisa.register_move", "dst", dst, _WHY)


@api("nisa.register_load")
def register_load(dst, src):
    refuse("nisa.register_load", "dst", dst, _WHY)


@api("nisa.register_store")
def register_store(dst, src):
    refuse("nisa.register_store", "src", src, _WHY)
