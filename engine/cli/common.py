"""What the subcommands share: the engine options asked for on the command line, the exit
status of user errors, and the messages on stderr (the ``spaseq`` loggers, ``-q``/``-v``)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spaseq.engine.compile.plan import EngineOptions

#: exit status of a user error (a bad query, option or input): its message, no traceback
EXIT_USER_ERROR = 2
#: exit status when the system refused (a full disk, an unreadable device): its message
EXIT_SYSTEM_ERROR = 1


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """The opt-in optimisations (``EngineOptions``), for ``run`` and ``explain`` alike."""
    parser.add_argument("--lazy-chain", action="store_true",
                        help="evaluate a leading 'X : Y ...' lazily, when its last atom matches (faster "
                             "when that atom is rare; same matches)")
    parser.add_argument("--lazy-conjunction", action="store_true",
                        help="evaluate conjunction operands once their timestamp is complete, cheapest "
                             "first (same matches; a --kb-store stays at the version the run "
                             "started on)")
    add_intervals_option(parser)


def add_intervals_option(parser: argparse.ArgumentParser) -> None:
    """``--intervals``: plan queries for events that last (``run``, ``explain``, ``serve``)."""
    parser.add_argument("--intervals", action="store_true",
                        help="plan for events that last (prov:startedAtTime/prov:endedAtTime): runs wait "
                             "until their window ends; without it an event that lasts is refused (a query "
                             "with a timer, or reading another query's results, is planned so anyway)")


def add_lateness_option(parser: argparse.ArgumentParser) -> None:
    """``--lateness``: the LATENESS of queries that do not say (``run`` and ``serve``)."""
    parser.add_argument("--lateness", type=duration, default=None, metavar="DURATION",
                        help="evaluate events in time order even when they come up to DURATION "
                             "behind the latest time seen on their stream (e.g. 500ms, 30sec, "
                             "'2 MINUTES'), for queries without a LATENESS clause; later ones are "
                             "late (default: none, every event must come in time order)")
    parser.add_argument("--idle-timeout", type=duration, default=None, metavar="DURATION",
                        help="a stream that sends nothing for DURATION (processing time) stops "
                             "holding the lateness back (default: the lateness; above 0)")


def add_late_options(parser: argparse.ArgumentParser) -> None:
    """``--late``: what is done with a late event (``run`` and ``serve``, decision 64)."""
    parser.add_argument("--late", choices=("drop", "error"), default="drop",
                        help="an event later than a query's clock or watermark (its lateness "
                             "passed), a heartbeat or a flush: drop (default): the queries it is "
                             "late for skip it and count it, the others take it; error: refuse it "
                             "(exit status 2 for run, 409 for serve)")


def add_mqtt_options(parser: argparse.ArgumentParser, query: str) -> None:
    """The MQTT options (``run`` and ``serve``, docs/decisions.md 74); ``query`` says what
    names a query in ``--publish``."""
    parser.add_argument("--mqtt", metavar="[USER@]HOST:PORT",
                        help="an MQTT broker: events from the --subscribe topics, matches to the --publish "
                             "topics; the password, if any, from $SPASEQ_MQTT_PASSWORD (needs paho-mqtt: "
                             "pip install 'spaseq[mqtt]')")
    parser.add_argument("--subscribe", action="append", default=[], metavar="TOPIC=STREAM",
                        help="events of stream STREAM from the topic filter TOPIC: one TriG or N-Quads "
                             "message per event, timestamped in the graph as in replay files; repeatable")
    parser.add_argument("--publish", action="append", default=[], metavar="QUERY=TOPIC",
                        help=f"publish each match of QUERY ({query}) to TOPIC as its jsonl object; repeatable")
    parser.add_argument("--mqtt-client-id", metavar="ID",
                        help="the client id; with one, the broker keeps the session (subscriptions, and "
                             "QoS 1-2 messages sent while spaseq is away); default: a clean session")
    parser.add_argument("--mqtt-qos", type=int, choices=(0, 1, 2), default=1,
                        help="the QoS of subscriptions and publications (default 1: at least once)")


def mqtt_settings(args: argparse.Namespace):
    """The MQTT options' settings (``io.mqtt.MqttSettings``; None without ``--mqtt``), checked,
    and paho-mqtt there (MissingExtraError otherwise)."""
    from spaseq.engine.io.mqtt import mqtt_settings as settings

    found = settings(args.mqtt, args.subscribe, args.publish, args.mqtt_qos, args.mqtt_client_id)
    if found is not None:
        from spaseq.engine.errors import require_extra

        require_extra("mqtt", "--mqtt", "paho")
    return found


def duration(text: str) -> object:
    """An option's duration (``parse_duration``: the query language's time units), in exact
    seconds; argparse reports a bad one with the usage, exit status 2."""
    from spaseq.engine.language.translate import parse_duration

    try:
        return parse_duration(text, "the duration")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """The engine's optimisations: the defaults, plus the opt-in ones asked for."""
    from spaseq.engine.compile.plan import EngineOptions

    return EngineOptions(lazy_chain=args.lazy_chain, lazy_conjunction=args.lazy_conjunction,
                         intervals=args.intervals)


log = logging.getLogger(__name__)

#: ``-q``/``-v`` counted (``-qq`` is -2) to the level of the ``spaseq`` loggers: by default
#: notes (info) and warnings; -q warnings only; -qq nothing but the errors that end the run;
#: -v adds debug lines (docs/decisions.md 42)
LEVELS = {-2: logging.ERROR, -1: logging.WARNING, 0: logging.INFO, 1: logging.DEBUG}


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record comes (tests swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler sets it; sys.stderr is always used
        pass


class _Format(logging.Formatter):
    """``spaseq: message``, ``spaseq: warning: message`` or ``spaseq: debug: message``; a
    record with ``line`` set (``extra={"line": True}``) is already a whole line, e.g. a
    query warning located ``FILE:LINE:COLUMN: warning: ...``, and a record with a
    ``location`` is written after it instead of ``spaseq``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if getattr(record, "line", False):
            return message
        where = getattr(record, "location", None) or "spaseq"
        tag = {logging.WARNING: "warning: ", logging.DEBUG: "debug: "}.get(record.levelno, "")
        return f"{where}: {tag}{message}"


_handler = _Stderr()
_handler.setFormatter(_Format())


def add_verbosity_options(parser: argparse.ArgumentParser, default: object = 0) -> None:
    """``-q``/``--quiet`` and ``-v``/``--verbose``, counted (``-qq`` quieter still);
    ``default=argparse.SUPPRESS`` on a subcommand keeps what was given before it."""
    parser.add_argument("-q", "--quiet", action="count", default=default,
                        help="fewer messages on stderr: -q warnings only, -qq errors only")
    parser.add_argument("-v", "--verbose", action="count", default=default,
                        help="more messages on stderr: debug lines (what ran and why)")


def configure_logging(verbosity: int) -> None:
    """Send the ``spaseq`` loggers' records to stderr at the level ``verbosity`` (the
    ``-v`` count minus the ``-q`` count) asks for."""
    logger = logging.getLogger("spaseq")
    logger.setLevel(LEVELS[max(-2, min(1, verbosity))])
    if _handler not in logger.handlers:
        logger.addHandler(_handler)
    logger.propagate = False  # written once, however the root logger is set up


def warn(lines: Sequence[str]) -> None:
    """Warnings already written as whole lines (a query's, located by the language checks)."""
    for line in lines:
        log.warning(line, extra={"line": True})
