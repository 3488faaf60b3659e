# Found by benchmarks/random_programs.py (seed 9930065, node limit 400, depth 7; minimized), Python 3.13.
class name_1:

    class name_5[*name_5]({a for a in a}):
        a
