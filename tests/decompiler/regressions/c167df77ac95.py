# Found by benchmarks/random_programs.py: pysource-codegen seed 41000171, Python 3.12.1.
# compile-error in <module>: SyntaxError: 'return' outside function (<unveil <module>>, line 25)
while unique_name_0:
    try:
        unique_name_1
    except:
        pass
    else:
        break
else:
    unique_name_2
