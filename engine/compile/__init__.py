"""From algebra to an executable plan: SEQ to NFA_scep (``nfa``), GPM bodies to their
evaluation path (``gpm_shape``, ``gpm_texts``), the plan (``planner``, ``plan_json``), and views
of the result for people (``explain``)."""
