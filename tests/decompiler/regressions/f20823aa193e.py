# Found by benchmarks/random_programs.py: pysource-codegen seed 129002828, Python 3.11.7.
# decompile-error in <module>: DecompilationError: unrecognised class creation [<ast.Starred object at 0x7ff47271e3e0>] in <module> at offset 182 (CALL_EX 1)
class name_0(*0, (0 if unique_name_3 else 0) if (unique_name_1 if unique_name_0 else unique_name_2) else 0):
    pass
