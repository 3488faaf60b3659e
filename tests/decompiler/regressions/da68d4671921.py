# Found by benchmarks/random_programs.py: pysource-codegen seed 38003308, Python 3.13.0.
# recompile-error in name_2: DecompilationError: recompiled code has co_freevars ('name_0', 'name_2', 'name_5') instead of ('name_0', 'name_5') in name_2
type unique_name_0 = {0 for unique_name_1 in '' if {0 for name_2 in unique_name_2} for [] in unique_name_3 if name_2 if f'' for name_2 in 0 for () in (lambda: name_2)}
