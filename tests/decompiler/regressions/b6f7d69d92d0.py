# Found by benchmarks/random_programs.py: pysource-codegen seed 112000804, Python 3.10.13.
# compile-error in <module>: SyntaxError: can't use starred expression here (<unveil <module>>, line 8)
class name_4(*0, name_5=(unique_name_0 or unique_name_1) and unique_name_2):
    pass
