# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
class name_3[name_2](name_2 if unique_name_0 else 0):
    pass
