# Found by benchmarks/random_programs.py: pysource-codegen seed 63000913, Python 3.13.0.
# recompile-error in name_1: DecompilationError: recompiled code has co_freevars ('.type_params', 'name_5') instead of ('.type_params', 'name_1', 'name_5') in name_1
class name_1[**name_1]:
    try:
        name_1
    except:
        pass
    finally:
        try:
            pass
        except* 0 as name_1:
            pass
        raise

    class name_4:
        name_1
