# Found by benchmarks/random_programs.py (seed 8428, minimized by hand), Python 3.14.
async def name_0[name_1]():
    try:
        pass
    except* name_1 as name_0:
        pass

    @name_0
    async def name_2():
        pass
