"""IR blocks to structured statements: ``structurer`` (if/elif/else, loops, try, with) with
its parts (``base``, ``ifs``, ``loops``, ``clauses``, ``clause_exits``, ``copies``,
``written``), and ``fallback``, the state machine for any graph it cannot structure."""
