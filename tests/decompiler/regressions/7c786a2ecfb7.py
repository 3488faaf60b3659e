# Found by benchmarks/random_programs.py: pysource-codegen seed 32000296, Python 3.12.1.
# recompile-error in name_3.<locals>.<genexpr>: DecompilationError: recompiled code has co_freevars ('name_1', 'name_4') instead of ('name_0', 'name_1', 'name_4') in <genexpr>
type unique_name_0[*name_0] = (name_0 for () in () if [0 for name_0 in unique_name_1] for unique_name_2 in 0 if ())
