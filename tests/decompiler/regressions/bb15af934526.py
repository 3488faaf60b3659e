# Found by benchmarks/random_programs.py: pysource-codegen seed 63000895, Python 3.11.7.
# decompile-error in <module>: DecompilationError: unrecognised class creation [<ast.Starred object at 0x7f34b32f0820>] in <module> at offset 304 (CALL_EX 1)
class name_3(*0, (unique_name_0 or unique_name_1) and 0):
    pass
