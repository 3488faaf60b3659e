# Found by benchmarks/random_programs.py: pysource-codegen seed 32000529, Python 3.12.1.
# recompile-error in name_4.<locals>.<genexpr>: DecompilationError: recompiled code has co_freevars ('name_2',) instead of ('name_1', 'name_2') in <genexpr>
type unique_name_0[*name_1] = (0 for [] in 0 for () in name_1 if () if {0: 0 for name_1 in unique_name_1})
