# Found by benchmarks/random_programs.py: pysource-codegen seed 97000207, Python 3.14.2.
# recompile-error in name_5.<locals>.<generic parameters of name_1>: DecompilationError: recompiled code has co_freevars ('name_2',) instead of ('name_1', 'name_2', 'name_5') in <generic parameters of name_1>
def name_5(name_2, /, *, name_5):

    def name_1[*name_4]() -> name_5:
        name_2
