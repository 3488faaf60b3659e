# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.13.
class name_5[**name_5](name_5 if unique_name_0 else 0):
    pass
