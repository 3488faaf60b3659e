# Found by benchmarks/random_programs.py: pysource-codegen seed 32001067, Python 3.13.0.
# recompile-error in name_2: DecompilationError: recompiled code has co_freevars ('name_2', 'name_5') instead of ('name_2',) in name_2
type unique_name_0 = {lambda: name_5: 0 for unique_name_1 in name_5 for name_5 in unique_name_2 if f''}
