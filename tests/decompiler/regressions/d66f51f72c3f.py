# Found by benchmarks/random_programs.py (seed 10003025, node limit 400, depth 7; minimized), Python 3.11.
async def name_4():
    return [a async for name_1 in a]

    class name_1:
        name_1
