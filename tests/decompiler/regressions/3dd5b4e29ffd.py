# Found by benchmarks/random_programs.py: pysource-codegen seed 42007887, Python 3.13.0.
# recompile-error in name_0: DecompilationError: recompiled code has co_cellvars ('name_5', 'name_0', 'name_1') instead of ('name_5', 'name_1') in name_0
def name_0():

    @{0: 0 for name_0 in unique_name_0}
    class name_1[**name_4]:
        pass
    type unique_name_1 = name_0
