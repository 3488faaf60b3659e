# Found by benchmarks/random_programs.py: pysource-codegen seed 121008272, Python 3.13.0.
# recompile-error in <genexpr>: DecompilationError: recompiled code has co_freevars () instead of ('name_4',) in <genexpr>
class name_4[name_4]((0 for unique_name_0 in 0 if f'' if name_4 for name_5 in 0 for unique_name_1 in 0 if (name_5 for unique_name_2 in unique_name_3) for unique_name_4 in 0 if {0 for name_4 in unique_name_5})):
    pass
