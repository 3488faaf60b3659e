# Found by benchmarks/random_programs.py: pysource-codegen seed 97000899, Python 3.14.2.
# recompile-error in name_4.<locals>.<generic parameters of name_3>: DecompilationError: recompiled code has co_freevars ('name_2', 'name_4') instead of ('name_1', 'name_2', 'name_4') in <generic parameters of name_3>
async def name_4(name_4, /, name_1):

    def name_3[**name_3](*name_3: name_1):
        name_4
