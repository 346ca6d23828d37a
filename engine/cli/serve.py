"""``spaseq serve``: the SPARQL endpoint with streaming extensions (``engine/server``)."""

from __future__ import annotations

import argparse
import os

from spaseq.engine.cli.common import (
    add_intervals_option,
    add_late_options,
    add_lateness_option,
    add_mqtt_options,
    mqtt_settings,
)
from spaseq.engine.errors import require_extra
from spaseq.engine.output.times import TIME_FORMATS
from spaseq.engine.server.config import DEFAULT_HOST, DEFAULT_MAX_BODY, DEFAULT_PORT, ServerConfig


def add_serve_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve a SPARQL endpoint with streaming extensions over HTTP")
    serve.add_argument("--host", default=DEFAULT_HOST,
                       help=f"address to listen on (default {DEFAULT_HOST}; a non-loopback address "
                            "needs --token)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.add_argument("--kb", action="append", default=[], metavar="[GRAPH-IRI=]FILE",
                       help="background knowledge file loaded into memory (triples need GRAPH-IRI=); "
                            "repeatable")
    serve.add_argument("--kb-store", metavar="DIR",
                       help="background knowledge: a store built by 'spaseq kb load' (read-only; "
                            "a newer version is picked up)")
    serve.add_argument("--data", metavar="DIR",
                       help="keep queries, accepted events and numbered matches here: a restart on "
                            "the same directory continues where the server stopped or crashed")
    serve.add_argument("--token", default=None,
                       help="writes need 'Authorization: Bearer TOKEN' (default: $SPASEQ_TOKEN)")
    serve.add_argument("--token-reads", action="store_true",
                       help="reads (SPARQL queries, matches, descriptions) need the token too")
    serve.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY, metavar="BYTES",
                       help=f"largest request body taken (default {DEFAULT_MAX_BODY}); larger: 413")
    serve.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                       help="let browser pages from ORIGIN call the server; repeatable")
    serve.add_argument("--max-queries", type=int, default=256,
                       help="most registered queries (default 256); more: 429")
    serve.add_argument("--max-clients", type=int, default=256,
                       help="most clients following matches by SSE or ndjson (default 256); more: 503")
    serve.add_argument("--keep-matches", type=int, default=None, metavar="N",
                       help="keep each query's newest N matches (default: all); older ones are "
                            "dropped from memory and, at the next checkpoint, from --data (410 after)")
    serve.add_argument("--follower-lag", type=int, default=10_000, metavar="N",
                       help="cut off an SSE/ndjson follower more than N matches behind, with a final "
                            "message saying where to resume (default 10000)")
    serve.add_argument("--idempotency-keys", type=int, default=100_000, metavar="N",
                       help="remember the newest N batch keys (Idempotency-Key or batch=) so a batch "
                            "sent again is not applied twice (default 100000)")
    serve.add_argument("--snapshot-every", type=int, default=1000, metavar="N",
                       help="with --data: snapshot the engine every N journal records (default 1000)")
    serve.add_argument("--certfile", metavar="FILE",
                       help="serve HTTPS: the certificate chain, PEM (needs --keyfile)")
    serve.add_argument("--keyfile", metavar="FILE",
                       help="the certificate's private key, PEM (needs --certfile)")
    add_lateness_option(serve)
    add_late_options(serve)
    add_intervals_option(serve)
    serve.add_argument("--time-format", choices=TIME_FORMATS, default="input",
                       help="how results write times (SPARQL results' _time/_start, the match log's "
                            "time_iso/start_iso, spaseq:time in the store): input (default): "
                            "xsd:dateTime for a match whose events were all stamped with one, "
                            "xsd:decimal seconds otherwise; dateTime or epoch: always that form")
    # MQTT (docs/decisions.md 74): events from topics, matches to topics
    add_mqtt_options(serve, "a registered query's id, e.g. q1")


def run_serve(args: argparse.Namespace) -> int:
    require_extra("server", "spaseq serve", "fastapi", "uvicorn", "sse_starlette", "prometheus_client")
    from spaseq.engine.server.serve import serve

    config = ServerConfig(host=args.host, port=args.port, kb=tuple(args.kb), kb_store=args.kb_store,
                          data=args.data, token=args.token or os.environ.get("SPASEQ_TOKEN") or None,
                          token_reads=args.token_reads,
                          max_body=args.max_body, cors=tuple(args.cors), max_queries=args.max_queries,
                          max_clients=args.max_clients, keep_matches=args.keep_matches,
                          follower_lag=args.follower_lag, idempotency_keys=args.idempotency_keys,
                          snapshot_every=args.snapshot_every, time_format=args.time_format,
                          lateness=args.lateness, idle_timeout=args.idle_timeout, late=args.late,
                          intervals=args.intervals, certfile=args.certfile, keyfile=args.keyfile,
                          mqtt=mqtt_settings(args))
    return serve(config)
