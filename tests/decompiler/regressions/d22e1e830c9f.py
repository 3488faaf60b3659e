# Found by benchmarks/random_programs.py (seed 10003677, node limit 400, depth 7; minimized), Python 3.12.
async def name_2(name_0):

    class name_4:
        global name_0
        name_0
