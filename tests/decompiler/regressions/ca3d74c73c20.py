# Found by benchmarks/random_programs.py: pysource-codegen seed 90001624, Python 3.12.1.
# decompile-error in <module>: DecompilationError: lazily evaluated type expression is not one expression in name_5
type unique_name_0 = 0 if (unique_name_2 if unique_name_1 else unique_name_3) else unique_name_4 or unique_name_5
