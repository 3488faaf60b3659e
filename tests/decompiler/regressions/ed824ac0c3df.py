# Found by benchmarks/random_programs.py: pysource-codegen seed 43000432, Python 3.10.13.
# compile-error in <module>: SyntaxError: can't use starred expression here (<unveil <module>>, line 9)
class name_5(*0, **(unique_name_0 or unique_name_1) and ()):
    pass
