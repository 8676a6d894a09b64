from ncverify_nki.nki_typing import *  # noqa: F401,F403
