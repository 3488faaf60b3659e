# Found by benchmarks/random_programs.py: pysource-codegen seed 87003455, Python 3.11.7.
# recompile-error in name_4: DecompilationError: recompiled code has co_cellvars ('name_0', 'name_1', 'name_2') instead of ('name_0', 'name_1') in name_4
def name_4(*name_2):

    def name_3():
        global name_2
        name_2
