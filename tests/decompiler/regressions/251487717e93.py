# Found by benchmarks/random_programs.py: pysource-codegen seed 42009174, Python 3.13.0.
# recompile-error in <genexpr>: DecompilationError: recompiled code has co_freevars ('name_0',) instead of ('name_0', 'name_2') in <genexpr>
class name_4[name_2](({0: 0 for name_2 in unique_name_0} for () in () if (lambda: name_2) for unique_name_1 in '' if f'' for unique_name_2 in name_2)):
    pass
