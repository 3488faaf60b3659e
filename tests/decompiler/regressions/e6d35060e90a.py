# Found by benchmarks/random_programs.py: pysource-codegen seed 94000153, Python 3.10.13.
# recompile-error in name_5.<locals>.name_3: DecompilationError: recompiled code has co_freevars ('name_3',) instead of () in name_3
def name_5():

    class name_3:
        raise name_3
        with 0 as name_3:
            pass
