# Found by benchmarks/random_programs.py (seed 10002151, node limit 400, depth 7; minimized), Python 3.12.
def name_2[**name_0](**name_5: a):
    return [a for name_0 in a]
    while a:
        try:
            pass
        except* name_0:
            pass
