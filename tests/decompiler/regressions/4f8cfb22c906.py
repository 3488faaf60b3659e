# Found by benchmarks/random_programs.py: pysource-codegen seed 110000323, Python 3.12.1.
# decompile-error in <module>: DecompilationError: unrecognised type parameter scope in <generic parameters of name_0>
class name_0[**name_3](0 not in 0 in 0 if (unique_name_1 if unique_name_0 else 0) else 0, **0):
    pass
