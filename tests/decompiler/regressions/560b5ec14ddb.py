# Found by benchmarks/random_programs.py: pysource-codegen seed 121001491, Python 3.13.0.
# recompile-error in <genexpr>: DecompilationError: recompiled code has co_freevars ('name_0',) instead of ('name_0', 'name_1', 'name_4') in <genexpr>
class name_5[**name_1]((0 for () in unique_name_0 if f'' if {0: 0 for name_1 in unique_name_1} for 0[name_1] in (name_3 for unique_name_2 in unique_name_3) for name_3 in unique_name_4)):
    pass
