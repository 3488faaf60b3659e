# Found by benchmarks/random_programs.py: pysource-codegen seed 44003647, Python 3.11.7.
# decompile-error in <module>: DecompilationError: cannot tell the stack depth at a jump target in <module> at offset 726
match 0:
    case _ if 0 != 0 is 0 != 0 != 0 > 0:
        pass
pass
