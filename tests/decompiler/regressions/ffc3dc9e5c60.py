# Found by benchmarks/random_programs.py (seed 9810568, node limit 400, depth 7; minimized), Python 3.13.
type a[name_4: a] = lambda *, name_0={a: a for name_4 in a}, **name_1: (name_4,)
