from ncverify_nki.compiler import *  # noqa: F401,F403
