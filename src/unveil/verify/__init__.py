"""Checking the decompiler's output against the original code.

- ``oracle``: the bytecode normalisation and comparison behind ``unveil check``, written
  apart from the decompiler (it reads ``dis``, not ``unveil.bytecode``) so that a bug in
  one cannot hide in the other;
- ``targets``: which files a check reads (paths, directories, module names);
- ``report``: the result per code object and the totals per file and run;
- ``batch``: checking one code object, or many in worker processes with a time limit;
- ``equivalence`` (with ``equivalence_terms`` and ``equivalence_ops``): a symbolic
  proof that recompiled code does what the original does where the bytecode differs,
  used before unveil runs its own code for a Dynamo frame.
"""
