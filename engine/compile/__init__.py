"""From algebra to an executable plan: SEQ to NFA_scep (``nfa``), GPM bodies to join plans and
filter code (``gpm_codegen``), and views of the result for people (``explain``)."""
