# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
def name_1[**name_2]() -> 0 not in 0 <= 0 < 0:
    pass
