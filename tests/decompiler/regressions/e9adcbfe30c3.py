# Found by benchmarks/random_programs.py: pysource-codegen seed 34001914, Python 3.12.1.
# compile-error in <module>: SyntaxError: 'return' outside function (<unveil <module>>, line 23)
for unique_name_0 in 0:
    try:
        name_5
        break
    except:
        pass
    finally:
        name_5
pass
pass
pass
pass
pass
