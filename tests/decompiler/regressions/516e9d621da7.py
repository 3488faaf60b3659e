# Found by benchmarks/random_programs.py: pysource-codegen seed 121008783, Python 3.13.0.
# recompile-error in name_1: DecompilationError: recompiled code has co_cellvars ('name_5',) instead of ('name_4', 'name_5') in name_1
type unique_name_0[name_4] = {0 for unique_name_1 in name_4 if (lambda: name_4) if name_4 if () for name_4 in unique_name_2}
