"""Which differential case exercises which argument of which call (both dialects)."""

TABLE = {"neuronxcc": {}, "nki": {}}


def claims_of(case):
    """The (dialect, call, argument) triples TABLE assigns to `case`."""
    out = []
    for dialect, calls in TABLE.items():
        for call, args in calls.items():
            for arg, cases in args.items():
                if case in ((cases,) if isinstance(cases, str) else cases):
                    out.append((dialect, call, arg))
    return out
