"""The MQTT options' mistakes: each a one-line message and exit status 2, before anything
connects (no broker needed)."""

from __future__ import annotations

import pytest

from spaseq.engine.cli.main import main

from .conftest import RISING

Q = str(RISING)


@pytest.mark.parametrize(("args", "message"), [
    (["run", Q, "--subscribe", "a=S"],
     "spaseq: --subscribe, --publish and --mqtt-client-id need --mqtt HOST:PORT (the broker)\n"),
    (["run", Q, "--mqtt", "localhost", "--subscribe", "a=S"],
     "spaseq: --mqtt localhost: expected [USER@]HOST:PORT (e.g. 127.0.0.1:1883)\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "readings"],
     "spaseq: --subscribe readings: expected TOPIC=STREAM\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "a/b#=S"],
     "spaseq: --subscribe a/b#: + and # stand for whole levels (a/+/c, a/#), # last\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "a=S2"],
     "spaseq: --subscribe a=S2: the query has no such stream (it has: S <http://ex.org/readings>)\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "a=S", "--publish", "other.rq=alerts"],
     f"spaseq: --publish other.rq=alerts: other.rq is none of the run's queries ({Q})\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "a=S", "--publish", f"{Q}=alerts/+"],
     "spaseq: --publish alerts/+: a topic to publish to has no wildcards (+, #)\n"),
    (["run", Q, "--mqtt", "localhost:1883", "--subscribe", "a=S", "--engine", "reference"],
     "spaseq: --mqtt needs the nfa engine and --stream inputs (not --engine reference, not --stream-file)\n"),
    (["serve", "--port", "0", "--mqtt", "localhost:1883", "--subscribe", "a=S"],
     "spaseq: --subscribe a=S: the stream is its IRI here (no query names it yet), written without <>\n"),
])
def test_mqtt_option_mistakes(args, message, capsys) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message)
