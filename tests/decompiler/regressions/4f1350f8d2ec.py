# Found by benchmarks/random_programs.py (seed 10003610, node limit 400, depth 7; minimized), Python 3.10.
class name_1(*a, a or (a := a)):
    a
