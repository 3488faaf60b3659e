# Found by benchmarks/random_programs.py: pysource-codegen seed 63001089, Python 3.13.0.
# recompile-error in name_5: DecompilationError: recompiled code has co_freevars ('name_0', 'name_1', 'name_5') instead of ('name_0', 'name_1') in name_5
type name_5[**name_0] = (0 for () in 0 for name_0.name_2 in (lambda: name_5) for () in 0 if f'' for name_5 in unique_name_0)
