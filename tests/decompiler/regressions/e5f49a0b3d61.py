# Found by benchmarks/random_programs.py: pysource-codegen seed 32000117, Python 3.10.13.
# decompile-error in <module>: DecompilationError: unrecognised class creation [<ast.Starred object at 0x7fd9e5752b60>] in <module> at offset 126 (CALL_FUNCTION_EX 1)
@name_3
class name_1((name_3 := unique_name_0), **(unique_name_1 or unique_name_2) and f''):
    pass
