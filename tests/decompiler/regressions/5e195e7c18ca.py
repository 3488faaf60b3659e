# Found by benchmarks/random_programs.py (seed 9930177, node limit 400, depth 7; minimized), Python 3.12.
class name_1[*name_4](name_0 or name_2 if a else a, name_2=a):
    pass
