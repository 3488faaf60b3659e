# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
class name_5[**name_1](0 >= 0 not in 0 >= 0):
    pass
