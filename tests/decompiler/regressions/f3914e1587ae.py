# Found by benchmarks/random_programs.py: pysource-codegen seed 38004290, Python 3.13.0.
# recompile-error in name_3: DecompilationError: recompiled code has co_freevars ('name_1', 'name_2', 'name_4') instead of ('name_1', 'name_4') in name_3
type unique_name_0[name_2] = [0 for unique_name_1 in (lambda: name_2) if name_2 for unique_name_2 in [0 for name_2 in unique_name_3] for () in [] if f'' for name_2 in 0]
