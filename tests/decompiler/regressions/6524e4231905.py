# Found by benchmarks/random_programs.py: pysource-codegen seed 32000119, Python 3.12.1.
# recompile-error in name_3: DecompilationError: recompiled code has co_freevars ('name_4',) instead of () in name_3
type unique_name_0 = [0 for name_4 in name_4 if () for unique_name_1 in unique_name_2 if (name_4 for unique_name_3 in unique_name_4)]
