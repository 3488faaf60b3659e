# Found by benchmarks/random_programs.py: pysource-codegen seed 97000935, Python 3.14.2.
# recompile-error in name_4: DecompilationError: recompiled code has co_freevars ('name_3',) instead of ('name_3', 'name_5') in name_4
type unique_name_0[**name_5] = {0: 0 for unique_name_1 in unique_name_2 if f'' if name_5}
