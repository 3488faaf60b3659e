# Found by benchmarks/random_programs.py: pysource-codegen seed 61000904, Python 3.12.1.
# recompile-error in name_1: DecompilationError: recompiled code has co_freevars ('name_5',) instead of ('name_2', 'name_5') in name_1
type unique_name_0[*name_2] = {0: 0 for unique_name_1 in name_2 for unique_name_2 in unique_name_3 if (lambda: name_2) if () for name_2 in unique_name_4}
