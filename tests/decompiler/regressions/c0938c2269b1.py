# Found by benchmarks/random_programs.py (seed 9720409, node limit 400, depth 7; minimized), Python 3.12.
class name_3[*name_5](**a if a else lambda **name_3: a):
    pass
