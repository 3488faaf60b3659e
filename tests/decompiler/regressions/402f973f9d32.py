# Found by benchmarks/random_programs.py: pysource-codegen seed 37000413, Python 3.12.1.
# recompile-error in name_1: DecompilationError: recompiled code has co_freevars ('name_0', 'name_1', 'name_4', 'name_5') instead of ('name_0', 'name_4', 'name_5') in name_1
type name_1[name_0] = (0 for 0[name_1] in unique_name_0 if name_0 for unique_name_1 in 0 if () for name_1 in unique_name_2)
