# Found by benchmarks/random_programs.py: pysource-codegen seed 85008091, Python 3.12.1.
# recompile-error in name_5: DecompilationError: recompiled code has co_freevars ('name_1',) instead of ('name_1', 'name_2') in name_5
type unique_name_0[name_2] = [0 for unique_name_1 in name_2 if (name_2 for unique_name_2 in unique_name_3) for () in 0 if {0: 0 for name_2 in unique_name_4}]
