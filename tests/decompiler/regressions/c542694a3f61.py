# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_0[*name_2](**0 if unique_name_0 else 0):
    pass
