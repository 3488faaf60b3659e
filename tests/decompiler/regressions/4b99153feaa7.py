# Found by benchmarks/random_programs.py: pysource-codegen seed 153007082, Python 3.13.0 (names for its constants).
# decompile-error in <module>: DecompilationError: cannot tell the stack depth at a jump target in <module> at offset 70
while a >= b > c is d <= e > f or b'x':
    pass
