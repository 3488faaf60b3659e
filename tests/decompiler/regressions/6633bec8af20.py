# Found by benchmarks/random_programs.py (seed 10005052, node limit 400, depth 7; minimized), Python 3.12.
class name_1[name_2](**a, name_1=[a for a in a] if a else a):
    a >>= a
