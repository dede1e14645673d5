"""The Python binding as the checkout's scripts have always imported it (``import kvtier_client``).

The code is the ``kvtier`` package beside this file (``kvtier._client``); this module is that same
module object under its old name, so both names share one loaded library and one set of classes.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kvtier import _client  # noqa: E402

sys.modules[__name__] = _client
