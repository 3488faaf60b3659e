# Found by benchmarks/random_programs.py: pysource-codegen seed 127003200, Python 3.14.2 (minimized by hand).
# recompile-error in T: recompiled code has co_freevars () instead of ('T',) in T (the same in an alias that names its own type parameter)
type T[T] = [0 for T in ()] or 'x' or T
