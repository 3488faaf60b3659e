"""Shared test setup: make ``src/`` importable when unveil is not installed."""

from __future__ import annotations

import importlib.util
import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

if importlib.util.find_spec("unveil") is None and os.path.isdir(_SRC):
    sys.path.insert(0, _SRC)
