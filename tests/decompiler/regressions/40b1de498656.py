# Found by benchmarks/random_programs.py (minimized with pysource-minimize), Python 3.12.
class name_2[**name_4]:
    class name_2[**name_4](name_3=name_4):
        pass
    try:
        pass
    except name_4:
        pass
