# Found by benchmarks/random_programs.py: pysource-codegen seed 71005293, Python 3.12.1.
# recompile-error in name_5: DecompilationError: recompiled code has co_freevars ('name_1', 'name_4', 'name_5') instead of ('name_1', 'name_4') in name_5
type name_5[name_4] = (0 for () in 0 if (0 for name_5 in name_4) for unique_name_0 in unique_name_1 if name_5 for unique_name_2 in b'' if None for name_5 in {})
