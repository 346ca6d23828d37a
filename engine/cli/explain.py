"""``spaseq explain``: a query's algebra, NFA_scep and plan as text, Graphviz DOT, or the plan
as JSON (``--plan``, docs/plan.md). The compiler is imported when the command runs, so
that building the ``spaseq`` parser stays cheap for the other commands."""

from __future__ import annotations

import argparse

from spaseq.engine.cli.common import add_engine_options, engine_options, warn


def add_explain_parser(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("explain", help="show a query's algebra, automaton and plan")
    ex.add_argument("query")
    shape = ex.add_mutually_exclusive_group()
    shape.add_argument("--dot", action="store_true", help="Graphviz DOT instead of text")
    shape.add_argument("--plan", action="store_true",
                       help="the physical plan as one JSON object (docs/plan.md)")
    add_engine_options(ex)  # the plan as `spaseq run` with the same options would run it


def run_explain(args: argparse.Namespace) -> int:
    from spaseq.engine.compile.explain import explain_dot, explain_text
    from spaseq.engine.compile.plan_json import plan_to_json
    from spaseq.engine.compile.planner import plan_query
    from spaseq.engine.language.query import load_query

    query = load_query(args.query)
    warn(query.warnings)
    if args.plan:
        print(plan_to_json(plan_query(query, engine_options(args))))
    else:
        print(explain_dot(query) if args.dot else explain_text(query, engine_options(args)))
    return 0
