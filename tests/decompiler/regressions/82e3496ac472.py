# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
def name_1[**name_5]():

    class name_2[*name_0](name_5, name_4=name_1):
        pass
