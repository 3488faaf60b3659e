# Found by benchmarks/random_programs.py: pysource-codegen seed 97000521, Python 3.14.2.
# recompile-error in name_5: DecompilationError: recompiled code has co_freevars () instead of ('name_1',) in name_5
type unique_name_0[**name_1] = 1 or name_1
