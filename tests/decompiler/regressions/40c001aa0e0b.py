# Found by benchmarks/random_programs.py: pysource-codegen seed 38000240, Python 3.12.1.
# recompile-error in name_5: DecompilationError: recompiled code has co_cellvars ('name_2', 'name_0', 'name_5') instead of ('name_2', 'name_5', 'name_0') in name_5
async def name_5():
    return
    for unique_name_0 in {0 for name_5 in unique_name_1}:
        name_0 = 0
    else:
        del name_5

    async def name_1[name_4](name_1: name_5, /) -> name_0:
        pass
