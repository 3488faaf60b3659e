"""Bytecode -> bytecode passes that run before the CFG is built: the compiler's copies of
statements undone (``tails``, ``tails_expressions``), ``match`` cases read into patterns
(``patterns``) and 3.12's inlined comprehensions folded (``inline_comprehensions``)."""
