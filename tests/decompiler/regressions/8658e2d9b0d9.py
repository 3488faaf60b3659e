# Found by benchmarks/random_programs.py: pysource-codegen seed 43004397, Python 3.10.13.
# recompile-error in name_1: DecompilationError: recompiled code has co_cellvars ('name_1', 'name_2', 'name_3') instead of ('name_2', 'name_3') in name_1
async def name_1():

    class name_1:
        name_1
        raise 0
        with 0 as name_1:
            pass
