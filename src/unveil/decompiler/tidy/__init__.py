"""Statements to the source a person writes: idioms (``idioms``), comprehensions,
annotations (3.14), PEP 695 generics, the returns of module and class bodies, and
Dynamo's frames simplified (``simplify``, ``temporaries``)."""
