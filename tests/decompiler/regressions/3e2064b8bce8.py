# Found by benchmarks/random_programs.py: pysource-codegen seed 127004937, Python 3.14.2 (minimized by hand).
# recompile-error in A: recompiled code has co_freevars () instead of ('T',) in A (T read only in the part the compiler dropped, and bound by a comprehension in the kept part)
type A[T] = [T for T in ()] or 'x' or T
