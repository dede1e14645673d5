"""The Python binding as the checkout's scripts have always imported it (``import kvtier_client``).

The code is the ``kvtier`` package beside this file (``kvtier._client``); this module is that same
module object under its old name, so both names share one loaded library and one set of classes.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # loaded by its path: the package is beside it
    sys.path.append(_HERE)
from kvtier import _client  # noqa: E402
from kvtier._client import *  # noqa: E402,F401,F403  (for a loader that keeps this module object)

sys.modules[__name__] = _client
