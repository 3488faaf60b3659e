# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
class name_3(*0, 0 > 0 != 0 >= 0):
    pass
