# Found by benchmarks/random_programs.py: pysource-codegen seed 71004675, Python 3.12.1.
# recompile-error in name_5: DecompilationError: recompiled code has co_freevars ('name_4',) instead of ('name_3', 'name_4') in name_5
type unique_name_0[name_3] = [(0 for unique_name_1 in unique_name_2 for unique_name_3 in name_3) for unique_name_4 in name_3 for () in unique_name_5 if () for name_3 in unique_name_6]
