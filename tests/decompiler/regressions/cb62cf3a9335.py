# Found by benchmarks/random_programs.py: pysource-codegen seed 97000250, Python 3.14.2.
# recompile-error in name_4.__annotate__: DecompilationError: recompiled code has co_freevars ('__conditional_annotations__',) instead of ('__classdict__', '__conditional_annotations__') in __annotate__
class name_4:
    if 0:
        unique_name_0: 0
