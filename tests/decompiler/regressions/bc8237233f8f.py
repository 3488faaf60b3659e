# Found by benchmarks/random_programs.py: pysource-codegen seed 40000288, Python 3.13.0.
# decompile-error in <module>: DecompilationError: lazily evaluated type expression is not one expression in name_2
type unique_name_0 = 0 if (0 if unique_name_1 else 0) else 0
