# Found by benchmarks/random_programs.py: pysource-codegen seed 19, Python 3.14 (a module that falls back to the state machine while it has annotations).
name_4.name_2
try:
    name_3
    raise name_2 from name_1
except name_3:
    pass
    pass
    pass
    pass
except name_1:
    pass
    pass
    pass
    pass
else:
    try:
        pass
        pass
        pass
        pass
    except:
        pass
    else:
        pass
        pass
        pass
    finally:
        pass
        pass
        pass
    name_0
    name_0
finally:
    name_4: name_0
    if name_0:
        pass
        pass
        pass
    else:
        pass
        pass
        pass
        pass
    name_5
    name_5
    name_3
lambda *name_4: name_2
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass
pass