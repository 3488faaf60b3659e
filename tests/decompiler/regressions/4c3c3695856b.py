# Found by benchmarks/random_programs.py: pysource-codegen seed 72001300, Python 3.13.0.
# recompile-error in name_4.name_2: DecompilationError: recompiled code has co_freevars ('__classdict__',) instead of ('__classdict__', 'name_4') in name_2
class name_4[*name_4]:
    type unique_name_0 = name_5 if name_4 else name_5
