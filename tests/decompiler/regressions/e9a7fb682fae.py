# Found by benchmarks/random_programs.py: pysource-codegen seed 113000409, Python 3.11.7.
# recompile-error in name_1: DecompilationError: recompiled code has co_cellvars ('name_1', 'name_0', 'name_2') instead of ('name_0', 'name_2') in name_1
def name_1(name_1, /):

    class name_2:
        raise name_1
        try:
            pass
        except* 0 as name_1:
            pass
