# Found by benchmarks/random_programs.py: pysource-codegen seed 43000148, Python 3.10.13.
# decompile-error in <module>: DecompilationError: MAKE_FUNCTION without a code constant in <module> at offset 192 (MAKE_FUNCTION 0)
while lambda : 0:
    match 0:
        case {**name_2} if unique_name_0:
            pass
