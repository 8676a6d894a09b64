"""ncverify's NKI front end: runs a user's unmodified NKI kernel on stand-ins for the
`neuronxcc.nki` modules, records what it does, and prints the program as `.nkir`.

    python3 ncverify_trace.py FILE.py:FUNCTION [--param NAME=VALUE]... [--option NAME=VALUE]...
        [--input NAME=DTYPE[d0,d1,...]]... [--shape NAME=a,b,...]... [--grid A[,B...]]

Exit 0 with the program on stdout; exit 2 with `FILE:LINE: what and why` on stderr.
"""

import os
import sys

# Run with -I (isolated): the stand-in packages next to this file come first on the path, ahead
# of any real neuronxcc installed on the machine.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import numpy  # noqa: F401  (kernels use it; the stand-ins map numpy functions to ALU ops)
except ImportError:
    sys.stderr.write("ncverify import: the NKI front end needs numpy for %s (Debian: "
                     "python3-numpy; ci/setup installs it)\n" % sys.executable)
    sys.exit(2)

from ncverify_nki.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
