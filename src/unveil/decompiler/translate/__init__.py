"""Blocks to IR blocks by symbolic execution: the machine (``machine``), its opcode families
(``opcodes_values``, ``opcodes_flow``, put together in ``executor``), where the arms of a
test meet (``merging``), and every block run from its entry stack (``blocks``)."""
