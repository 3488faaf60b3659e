# Found by benchmarks/random_programs.py (seed 10004176, node limit 400, depth 7; minimized), Python 3.12.
class name_4[*name_2](**a, name_4=a if a else (a async for a in a)):

    def name_0():
        a
