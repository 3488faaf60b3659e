# Found by benchmarks/random_programs.py (seed 9820482, node limit 400, depth 7; minimized), Python 3.13.
class name_2[name_1: a](a != name_2 < name_1 not in name_0 if a else a, **a):
    a
