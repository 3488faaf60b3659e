# Found by benchmarks/random_programs.py: pysource-codegen seed 72006168, Python 3.13.0.
# decompile-error in <module>: DecompilationError: unrecognised class creation [<ast.Starred object at 0x7fd4004aaa50>] in <generic parameters of name_2> at offset 758 (CALL_EX 1)
class name_2(*0, 0 if (0 if unique_name_0 else unique_name_1) else 0):
    pass
