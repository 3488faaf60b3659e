# Found by benchmarks/random_programs.py: pysource-codegen seed 32001271, Python 3.12.1.
# recompile-error in <genexpr>: DecompilationError: recompiled code has co_freevars ('name_5',) instead of ('name_0', 'name_5') in <genexpr>
class name_4[name_0]((name_0 for unique_name_0 in f'' if () for unique_name_1 in {} if [0 for name_0 in unique_name_2])):
    pass
