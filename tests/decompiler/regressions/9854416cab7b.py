# Found by benchmarks/random_programs.py (seed 10001860, node limit 400, depth 7; minimized), Python 3.10.
class name_3(*a, name_2=a if (a if a else a) else a):
    pass
