"""Differential cases, new dialect: nki.isa.sendrecv, the exchange of tiles between the two
NeuronCores of a logical NeuronCore (LNC2), against a NumPy statement of its documented semantics
(aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae, NKI 0.6: "The current NeuronCore sends
its src tile to the dst location of the target NeuronCore specified by send_to_rank, while
simultaneously receiving data from recv_from_rank into its own dst tile"), both when the kernel is
traced once for every program and when its Python needs the program id (traced once per program,
frontend/python/ncverify_nki/per_program.py); a planted wrong peer that the comparison catches;
and the arguments the front end refuses, each at the kernel's line. Written against the
documentation, not the implementation. Run by `python3 -m ncverify_nki.run` (ctest label
`frontend`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from diffharness import Mismatch, run_case, to_bf16
from targets import default, target

default("trn2")  # sendrecv needs NeuronCore-v3 or newer

F32 = np.float32


def documented_sendrecv(src, send, recv):
    """The page's semantics on a two-core grid: core c's src lands in the dst of core send[c];
    core c's dst holds what core recv[c] sent (so send[recv[c]] must be c). src[c] and the result
    are per-core tiles."""
    dst = [None] * len(src)
    for c, tile in enumerate(src):
        dst[send[c]] = tile
    for c in range(len(src)):
        assert send[recv[c]] == c, "the ranks of the reference do not pair"
    return dst


@nki.jit
def exchange_kernel(x, body, tile_dtype=nl.float32):
    """Program p loads its half of x (rows p*P..) into a tile of `tile_dtype` (the DMA casts),
    `body(pid, tile)` returns the tile it wants stored, and program p stores it to its half of
    the output."""
    p = x.shape[0] // 2
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    mine = nl.ndarray((p, x.shape[1]), dtype=tile_dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[nl.ds(pid * p, p), :])
    res = body(pid, mine)
    nisa.dma_copy(dst=out[nl.ds(pid * p, p), :], src=res)
    return out


@nki.jit
def gather_halves_kernel(x, per_program):
    """An all-gather of two blocks: program p holds its block x_p in columns p*F.. of a [P, 2F]
    tile, sends it into the peer's same columns (its dst is the other half, (1 - p)*F..), and
    stores the whole tile; `per_program` adds an `if` on the program id (traced per program)."""
    p, f = x.shape[0] // 2, x.shape[1]
    out = nl.ndarray((2 * p, 2 * f), dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    both = nl.ndarray((p, 2 * f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=both[:, nl.ds(pid * f, f)], src=x[nl.ds(pid * p, p), :])
    if per_program:
        if pid == 0:
            nisa.tensor_copy(both[:, nl.ds(0, f)], both[:, nl.ds(0, f)])
    nisa.sendrecv(src=both[:, nl.ds(pid * f, f)], dst=both[:, nl.ds((1 - pid) * f, f)],
                  send_to_rank=1 - pid, recv_from_rank=1 - pid, pipe_id=0)
    nisa.dma_copy(dst=out[nl.ds(pid * p, p), :], src=both)
    return out


def _halves(a):
    p = a.shape[0] // 2
    return [a[:p], a[p:]]


def _draw(c, dtype):
    p, f = c.shape(parts=(1, 64), free=(1, 32))
    a = c.floats((2 * p, f))
    if dtype == nl.bfloat16:
        a = to_bf16(a)
    return p, f, a


class SendRecv(unittest.TestCase):
    def test_exchange_one_trace(self):
        """The kernel's Python never needs the program id: one trace for both cores, the ranks
        `1 - pid`. fp32 and bf16; the GpSimd DMA engine and a pipe_id."""
        def body(c):
            for dtype, engine in ((nl.float32, nisa.dma_engine.dma),
                                  (nl.bfloat16, nisa.dma_engine.gpsimd_dma)):
                p, f, a = _draw(c, dtype)
                pipe = int(c.rng.integers(0, 4))

                def swap(pid, t, dtype=dtype, engine=engine, pipe=pipe):
                    got = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
                    nisa.sendrecv(src=t, dst=got, send_to_rank=1 - pid, recv_from_rank=1 - pid,
                                  pipe_id=pipe, dma_engine=engine, name="swap")
                    return got
                # (bf16 tiles hold values a bf16 keeps: the casting DMAs are exact)
                o = exchange_kernel[2](a, swap, tile_dtype=dtype)
                want = np.concatenate(documented_sendrecv(_halves(a), [1, 0], [1, 0]))
                c.check("sendrecv %s %s [%d, %d]" % (dtype, engine, p, f), o, want)
        run_case("nks_exchange", body)

    def test_gather_halves(self):
        """Each program's dst is the other half of one tile (a view that depends on the program
        id): both end with [x_0 | x_1]. One trace and per program."""
        def body(c):
            p, f, a = _draw(c, nl.float32)
            blocks = _halves(a)
            for per_program in (False, True):
                o = gather_halves_kernel[2](a, per_program)
                got = documented_sendrecv(blocks, [1, 0], [1, 0])  # what each core receives
                tiles = []
                for core in (0, 1):
                    t = np.zeros((p, 2 * f), F32)
                    t[:, core * f:(core + 1) * f] = blocks[core]
                    t[:, (1 - core) * f:(2 - core) * f] = got[core]
                    tiles.append(t)
                c.check("all-gather of halves%s [%d, %d]" %
                        (" per program" if per_program else "", p, f), o, np.concatenate(tiles))
        run_case("nks_halves", body)

    def test_exchange_per_program(self):
        """The kernel's Python needs the program id (an `if` on it: traced once per program):
        program 1 doubles its tile first, both exchange, then exchange back the sum of what
        they got and 1 on another pipe. Two calls in order, each program's own statement."""
        def body(c):
            p, f, a = _draw(c, nl.float32)

            def twice(pid, t):
                if pid == 1:
                    nisa.tensor_scalar(t, t, nl.multiply, 2.0)
                got = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
                nisa.sendrecv(t, got, 1 - pid, 1 - pid, 0)
                nisa.tensor_scalar(got, got, nl.add, 1.0)
                back = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
                nisa.sendrecv(src=got, dst=back, send_to_rank=1 - pid, recv_from_rank=1 - pid,
                              pipe_id=1)
                return back
            o = exchange_kernel[2](a, twice)
            h = _halves(a)
            first = documented_sendrecv([h[0], h[1] * F32(2)], [1, 0], [1, 0])
            second = documented_sendrecv([t + F32(1) for t in first], [1, 0], [1, 0])
            c.check("two exchanges, traced per program [%d, %d]" % (p, f), o,
                    np.concatenate(second))
        run_case("nks_per_program", body)

    def test_views_differing_between_programs(self):
        """Per program, program 0 exchanges its tiles viewed as [P, 2, F] (src and dst alike),
        program 1 as [P, 2F]: one partition count and one number of elements per partition (the
        page's rule), so the pairing allows it; but viewing an SBUF tile so redeclares its
        storage ([P, 2, F]), and the two programs' dst tensors, which the model makes one
        buffer, are then declared differently: refused, naming both."""
        def body(c):
            p, f, a = _draw(c, nl.float32)
            x = np.concatenate([a, a * F32(3)], axis=1)  # [2p, 2f]
            call = lambda s, d, pid: nisa.sendrecv(src=s, dst=d, send_to_rank=1 - pid, recv_from_rank=1 - pid, pipe_id=0)  # noqa: E501,E731

            def swap(pid, t):
                got = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
                if pid == 0:
                    call(t.reshape((p, 2, f)), got.reshape((p, 2, f)), pid)
                else:
                    call(t, got, pid)
                return got
            c.refused(exchange_kernel[2], (x,), {"body": swap}, "nisa.sendrecv",
                      "are not declared alike", call)
        run_case("nks_views", body)

    def test_planted_wrong_peer_is_caught(self):
        """A mistrace planted in the front end (each core's DMA writes its own dst instead of
        the peer's: the wrong peer) makes the comparison above fail, and per program the
        pairing check refuses it."""
        from ncverify_nki.expr import Lin
        from ncverify_nki.newapi import sendrecv as sr

        def body(c):
            p, f, a = _draw(c, nl.float32)

            def swap(pid, t):
                got = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
                nisa.sendrecv(src=t, dst=got, send_to_rank=1 - pid, recv_from_rank=1 - pid,
                              pipe_id=0)
                return got

            def swap_per_program(pid, t):
                if pid == 0:
                    nisa.tensor_copy(t, t)
                return swap(pid, t)
            right = sr.written_core
            sr.written_core = lambda send: 1 - send if isinstance(send, int) else \
                Lin.of(1).sub(Lin.of(send))
            try:
                o = exchange_kernel[2](a, swap)
                want = np.concatenate(documented_sendrecv(_halves(a), [1, 0], [1, 0]))
                try:
                    c.check("planted wrong peer", o, want)
                except Mismatch:
                    pass
                else:
                    raise AssertionError("a sendrecv that writes its own dst went unnoticed")
                try:
                    exchange_kernel[2](a, swap_per_program)
                except Exception as e:  # noqa: BLE001 (KernelNotTraced)
                    self.assertIn("receives from program", str(e))
                else:
                    raise AssertionError("per program, the planted peer was not refused")
            finally:
                sr.written_core = right
        run_case("nks_planted", body)

    def test_refused(self):
        """Each documented constraint, refused at the call's line naming what breaks it."""
        def body(c):
            a = c.floats((8, 4))

            def at(call):
                return lambda pid, t: (call(pid, t), t)[1]

            def sb(shape=(4, 4), dtype=nl.float32):
                return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)

            hbm = lambda pid, t: nisa.sendrecv(t, nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm), 1 - pid, 1 - pid, 0)  # noqa: E501,E731
            dtype = lambda pid, t: nisa.sendrecv(t, sb(dtype=nl.bfloat16), 1 - pid, 1 - pid, 0)  # noqa: E501,E731
            shape = lambda pid, t: nisa.sendrecv(t, sb((4, 2)), 1 - pid, 1 - pid, 0)  # noqa: E731
            pipe = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, pipe_id=-1)  # noqa: E731
            big = lambda pid, t: nisa.sendrecv(sb((4, 257)), sb((4, 257)), 1 - pid, 1 - pid, 0, dma_engine=nisa.dma_engine.gpsimd_dma)  # noqa: E501,E731
            eng = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, 0, dma_engine=1)  # noqa: E501,E731
            rank = lambda pid, t: nisa.sendrecv(t, sb(), send_to_rank=2 - pid, recv_from_rank=1 - pid, pipe_id=0)  # noqa: E501,E731
            unpaired = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, recv_from_rank=pid, pipe_id=0)  # noqa: E501,E731
            named = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, 0, name=5)  # noqa: E501,E731
            for call, arg in ((hbm, "SBUF"), (dtype, "data type"), (shape, "shape"),
                              (pipe, "pipe_id"), (big, "dma_engine=gpsimd_dma"),
                              (eng, "dma_engine"), (rank, "send_to_rank"),
                              (unpaired, "recv_from_rank"), (named, "name")):
                c.refused(exchange_kernel[2], (a,), {"body": at(call)}, "nisa.sendrecv", arg,
                          call)

            # one program more calls than the other (traced per program): refused at the call
            def extra(pid, t):
                if pid == 0:
                    lone(pid, t)
                return t
            lone = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, 0)  # noqa: E731
            c.refused(exchange_kernel[2], (a,), {"body": extra}, "nisa.sendrecv",
                      "makes 0 nisa.sendrecv calls", lone)
            # two pipes paired crosswise (traced per program)
            cross = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, pipe_id=1 if pid == 1 else 0)  # noqa: E501,E731
            c.refused(exchange_kernel[2], (a,), {"body": at(cross)}, "nisa.sendrecv", "pipe_id",
                      cross)
            # one core (no LNC2), and NeuronCore-v2
            swap = lambda pid, t: nisa.sendrecv(t, sb(), 1 - pid, 1 - pid, 0)  # noqa: E731
            c.refused(exchange_kernel[1], (a,), {"body": at(swap)}, "nisa.sendrecv", "LNC2",
                      swap)
            with target("trn1"):  # (whose logical cores are single NeuronCores)
                c.refused(exchange_kernel[1], (a,), {"body": at(swap)}, "nisa.sendrecv",
                          "NeuronCore-v3", swap)
        run_case("nks_refused", body)


if __name__ == "__main__":
    unittest.main()
