# Found by benchmarks/random_programs.py (seed 10001381, node limit 400, depth 7; minimized), Python 3.12.
class name_4[**name_3](**a.name_2 or '\'"\'\'\'"""{}\\' or {}):
    a
