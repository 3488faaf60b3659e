# Found by benchmarks/random_programs.py: pysource-codegen seed 122003496, Python 3.12.1.
# decompile-error in <module>: DecompilationError: unrecognised type parameter scope in <generic parameters of name_2>
class name_2[*name_4](0 < 0 >= 0 if (unique_name_1 if unique_name_0 else 0) else 0, **0):
    pass
