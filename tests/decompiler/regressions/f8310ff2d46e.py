# Found by benchmarks/random_programs.py: pysource-codegen seed 41000339, Python 3.12.1.
# recompile-error in name_4: DecompilationError: recompiled code has co_freevars ('name_4',) instead of () in name_4
def name_4():
    {0 for name_4 in unique_name_0}
    while 0:
        import name_5 as name_4
    else:
        name_4

    class name_2[**name_1](name_2=name_4):
        pass
