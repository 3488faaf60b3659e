# Found by benchmarks/random_programs.py: pysource-codegen seed 127003792, Python 3.14.2 (minimized by hand).
# recompile-error in C.__annotate__: recompiled code has co_freevars ('__conditional_annotations__',) instead of ('__classdict__', '__conditional_annotations__') (an annotation in a finally: two entries of one name)
class C:
    try:
        pass
    finally:
        x: int
