# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
class name_2[*name_0](0 == 0 in 0 not in 0):
    pass
