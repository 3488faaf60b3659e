# Found by benchmarks/random_programs.py: pysource-codegen seed 127000943, Python 3.14.2 (minimized by hand).
# recompile-error in __annotate__: recompiled code has co_freevars () instead of ('T',) in __annotate__ (a comprehension reads the free T; the symbol table meets the positional-only annotation first)
def f[T](a: [x for y in z for x in T], /, b: [0 for T in w]):
    pass
