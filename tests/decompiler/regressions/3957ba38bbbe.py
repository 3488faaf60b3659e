# Found by benchmarks/random_programs.py: pysource-codegen seed 40000391, Python 3.12.1.
# decompile-error in <module>: DecompilationError: unrecognised type parameter scope in <generic parameters of name_3>
class name_3[*name_3](**0 > 0 == (0 if unique_name_0 else 0)):
    pass
