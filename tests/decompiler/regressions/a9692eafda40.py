# Found by benchmarks/random_programs.py: pysource-codegen seed 81000273, Python 3.13.0.
# decompile-error in <module>: DecompilationError: lazily evaluated type expression is not one expression in name_4
type unique_name_0 = 0 if (0 if unique_name_1 else unique_name_2) else unique_name_3 and unique_name_4
