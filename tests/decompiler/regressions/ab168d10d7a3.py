# Found by benchmarks/random_programs.py: pysource-codegen seed 97000936, Python 3.14.2.
# recompile-error in name_1.<locals>.<generic parameters of name_0>: DecompilationError: recompiled code has co_freevars ('name_0',) instead of ('name_0', 'name_3') in <generic parameters of name_0>
def name_1(**name_3):

    def name_0[name_4]() -> name_3:
        name_0
