# Found by benchmarks/random_programs.py: pysource-codegen seed 71009247, Python 3.12.1.
# decompile-error in <module>: DecompilationError: unrecognised type parameter scope in <generic parameters of name_1>
class name_1(0 if (0 if unique_name_0 else 0) else (0 for unique_name_1 in unique_name_2)):
    pass
