# Found by benchmarks/random_programs.py: pysource-codegen seed 63001967, Python 3.13.0.
# recompile-error in name_2: DecompilationError: recompiled code has co_freevars ('name_2', 'name_4') instead of ('name_4',) in name_2
type name_2[**name_4] = (lambda: name_2 for unique_name_0 in unique_name_1 if [name_4 for unique_name_2 in name_2] for unique_name_3 in 0 if () for name_2 in unique_name_4)
