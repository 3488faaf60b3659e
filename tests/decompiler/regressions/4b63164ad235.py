# Found by benchmarks/random_programs.py (seed 2573620, node limit 400, depth 7; minimized), Python 3.12.
async def name_2(*, name_3={}):
    return (a for name_3 in a)
    type a = (name_3,)
