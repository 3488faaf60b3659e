# Found by benchmarks/random_programs.py: pysource-codegen seed 36001224, Python 3.12.1.
# decompile-error in <module>: DecompilationError: jump to a missing block
try:
    pass
except:
    pass
else:
    unique_name_0
finally:
    while unique_name_2 if unique_name_1 else unique_name_3:
        try:
            pass
        except:
            pass
    else:
        pass
