# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_5[**name_4](0 in 0 <= 0):
    pass
