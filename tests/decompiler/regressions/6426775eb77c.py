# Found by benchmarks/random_programs.py: pysource-codegen seed 41000418, Python 3.12.1.
# decompile-error in <module>: DecompilationError: MAKE_FUNCTION without a code constant in name_1 at offset 84 (MAKE_FUNCTION 0)
(lambda: 0) if unique_name_0 else lambda: 0
