# Found by benchmarks/random_programs.py: pysource-codegen seed 45001087, Python 3.12.1.
# decompile-error in <module>: DecompilationError: unrecognised class creation [<ast.Starred object at 0x7f9a39a79790>] in <generic parameters of name_4> at offset 310 (CALL_EX 1)
class name_4(*0, 0 if (0 if unique_name_0 else unique_name_1) else 0):
    pass
