# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_0[**name_5](0 == 0 == 0):
    pass
