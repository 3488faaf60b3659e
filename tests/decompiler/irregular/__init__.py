"""Hand-assembled bytecode that no compiler produces, for the decompiler's behaviour tests.

See :mod:`.assembler` and ``tests/decompiler/test_irregular.py``.
"""
