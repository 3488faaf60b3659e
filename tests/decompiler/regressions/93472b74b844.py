# Found by benchmarks/random_programs.py: pysource-codegen seed 86003818, Python 3.10.13.
# recompile-error in name_0: DecompilationError: recompiled code has co_cellvars ('name_4', 'name_5') instead of ('name_4',) in name_0
def name_0(*, name_5):

    class name_1:
        name_5
        raise
        try:
            pass
        except 0 as name_5:
            pass
