# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_3:
    def name_0[name_1: name_1]():
        pass
