# Found by benchmarks/random_programs.py: pysource-codegen seed 122002725, Python 3.12.1.
# recompile-error in name_1: DecompilationError: recompiled code has co_cellvars () instead of ('name_4',) in name_1
type unique_name_0[name_4] = {0 for [] in name_4 for 0[name_4] in (lambda: name_4) if () for name_4 in 0}
