# Found by benchmarks/random_programs.py: pysource-codegen seed 45000735, Python 3.12.1.
# recompile-error in name_4: DecompilationError: recompiled code has co_freevars ('name_0', 'name_1', 'name_2', 'name_4') instead of ('name_0', 'name_1', 'name_2') in name_4
type name_4[name_2] = (0 for name_4[0] in 0 if None if name_2 for () in f'' if (name_4 for unique_name_0 in unique_name_1) for name_4 in 0)
