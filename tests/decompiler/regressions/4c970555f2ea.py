# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_4(unique_name_0, **0 if unique_name_1 else 0):
    pass
