"""Behaviour tests of the decompiler: a corpus of functions and the oracle that runs it."""
