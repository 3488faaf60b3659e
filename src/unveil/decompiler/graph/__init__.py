"""Basic blocks and the facts of their graph: the CFG (``cfg``), dominators, loops and
handler regions (``regions``), and what the compiler's block layout tells (``layout``)."""
