# Found by benchmarks/random_programs.py: pysource-codegen seed 45002729, Python 3.12.1.
# recompile-error in name_4: DecompilationError: recompiled code has co_freevars () instead of ('name_2',) in name_4
async def name_4[**name_2]():
    type unique_name_0[**name_2] = name_2
    return
    name_2
