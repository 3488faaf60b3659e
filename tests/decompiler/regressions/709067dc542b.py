# Found by benchmarks/random_programs.py: pysource-codegen seed 36001807, Python 3.12.1.
# recompile-error in name_4: DecompilationError: recompiled code has co_freevars ('.type_params',) instead of ('.type_params', 'name_3') in name_4
class name_4[name_3]:
    type name_3 = 0
    raise
    [0 for unique_name_0 in unique_name_1 for unique_name_2 in name_3]
