# Found by benchmarks/random_programs.py: pysource-codegen seed 42000190, Python 3.13.0.
# compile-error in <module>: SyntaxError: 'return' outside function (<unveil <module>>, line 9)
while {0}:
    try:
        unique_name_0
    except* 0:
        pass
    else:
        break
    finally:
        break
pass
pass
pass
