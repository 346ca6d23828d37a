"""MQTT in and out (issue 30, docs/decisions.md 74), with paho-mqtt (the ``mqtt`` extra).

- ``MqttSettings`` (``mqtt_settings``): what ``--mqtt``, ``--subscribe``, ``--publish``,
  ``--mqtt-client-id`` and ``--mqtt-qos`` ask for, checked (the password from
  ``$SPASEQ_MQTT_PASSWORD``);
- ``MqttClient``: paho's client kept connected on a thread of its own: it reconnects with
  backoff (a lost connection and its recovery each said once on stderr, never each
  attempt), subscribes again after every connection, hands each message to a handler and
  publishes;
- ``payload_formats``: the formats a message is read in, the likelier first;
- ``Refused``: messages refused, each said on stderr (``spaseq: mqtt TOPIC: message``) and
  counted per topic;
- ``MessageInlets``: ``spaseq run``'s subscriptions as native live sources of
  ``Engine.run_live`` (``_native.LiveInlet``).

A message is one replay batch (TriG or N-Quads: one event per named graph, timestamped in
the default graph), read by the native replay reader exactly as a replay file or a ``POST
/events`` body is: nothing here parses RDF."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spaseq.engine.errors import UsageError, require_extra

if TYPE_CHECKING:
    from spaseq.engine._native import LiveInlet

log = logging.getLogger(__name__)

#: the environment variable holding the broker's password (never a flag: it would show in ps)
PASSWORD_ENV = "SPASEQ_MQTT_PASSWORD"
#: the formats a message may be in (``--input-format`` forces one)
FORMATS = ("trig", "nquads")


@dataclass(frozen=True)
class MqttSettings:
    """The broker, the subscriptions (topic filter, stream as given) and publications
    (query as given, topic), and how to talk to the broker."""

    host: str
    port: int
    subscribe: tuple[tuple[str, str], ...] = ()
    publish: tuple[tuple[str, str], ...] = ()
    qos: int = 1
    client_id: str | None = None
    username: str | None = None
    password: str | None = None

    @property
    def address(self) -> str:
        """``HOST:PORT``, as messages name the broker."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def mqtt_settings(address: str | None, subscribe: Sequence[str], publish: Sequence[str], qos: int = 1,
                  client_id: str | None = None, env: Mapping[str, str] = os.environ) -> MqttSettings | None:
    """The options' settings (None without ``--mqtt``); UsageError for a malformed one."""
    if address is None:
        if subscribe or publish or client_id is not None:
            raise UsageError("--subscribe, --publish and --mqtt-client-id need --mqtt HOST:PORT (the broker)")
        return None
    user, _, hostport = address.rpartition("@")
    host, colon, port = hostport.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--mqtt {address}: expected [USER@]HOST:PORT (e.g. 127.0.0.1:1883)")
    subscriptions = tuple(_pair("--subscribe", spec, "TOPIC=STREAM") for spec in subscribe)
    for topic, _ in subscriptions:
        _check_topic("--subscribe", topic, wildcards=True)
    publications = tuple(_pair("--publish", spec, "QUERY=TOPIC") for spec in publish)
    for _, topic in publications:
        _check_topic("--publish", topic, wildcards=False)
    return MqttSettings(host, int(port), subscriptions, publications, qos, client_id or None,
                        user or None, env.get(PASSWORD_ENV) if user else None)


def _pair(option: str, spec: str, form: str) -> tuple[str, str]:
    """``A=B`` split at its first ``=``; UsageError when a side is empty."""
    left, sep, right = spec.partition("=")
    if not sep or not left or not right:
        raise UsageError(f"{option} {spec}: expected {form}")
    return left, right


def _check_topic(option: str, topic: str, wildcards: bool) -> None:
    """UsageError for a topic MQTT refuses: ``+`` and ``#`` only as whole levels (``#`` the
    last), and only in a subscription's filter."""
    levels = topic.split("/")
    for i, level in enumerate(levels):
        if ("+" in level or "#" in level) and not wildcards:
            raise UsageError(f"{option} {topic}: a topic to publish to has no wildcards (+, #)")
        if ("+" in level and level != "+") or ("#" in level and (level != "#" or i != len(levels) - 1)):
            raise UsageError(f"{option} {topic}: + and # stand for whole levels (a/+/c, a/#), # last")
    if "\0" in topic:
        raise UsageError(f"{option} {topic!r}: a topic holds no NUL character")


def payload_formats(payload: bytes, forced: str | None = None) -> tuple[str, ...]:
    """The formats to read a message in, in order: ``forced`` alone, or TriG first when it
    has a brace (a graph block), else N-Quads first (a literal may hold a brace: the other
    format is tried next)."""
    if forced is not None:
        return (forced,)
    return FORMATS if b"{" in payload else FORMATS[::-1]


class Refused:
    """Messages refused (malformed, or refused by the engine), each said on stderr as
    ``spaseq: mqtt TOPIC: message`` and counted per topic."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, topic: str, message: str) -> None:
        with self._lock:
            self.counts[topic] = self.counts.get(topic, 0) + 1
        log.warning("spaseq: mqtt %s: %s", topic, message, extra={"line": True})

    def summary(self) -> str | None:
        """What was refused, for the end of a run (None: nothing)."""
        with self._lock:
            if not self.counts:
                return None
            per_topic = ", ".join(f"{topic} {n}" for topic, n in self.counts.items())
            return f"mqtt: {sum(self.counts.values())} message(s) refused ({per_topic})"


def located(exc: BaseException) -> str:
    """A native reader's error in a message as ``LINE:COLUMN: message`` (the place in the
    message, its label left out)."""
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    message = getattr(exc, "message", None) or str(exc)
    if line is None:
        return message
    return f"{line}:{column}: {message}" if column is not None else f"{line}: {message}"


class MqttClient:
    """paho-mqtt's client, connected in the background (``start``) and kept so: a lost
    connection is retried with backoff (``RECONNECT_DELAYS``), said once when it is lost and
    once when it is back; the subscriptions are made again on every connection, at the
    settings' QoS. ``handler(topic, payload)`` gets each message on paho's thread (an
    exception there is said, never let out: the client goes on); ``publish`` queues a
    message (kept across a reconnection at QoS 1 and 2), ``close`` waits a little for those
    queued, then disconnects."""

    #: the first and the longest wait between two connection attempts, seconds (doubling)
    RECONNECT_DELAYS = (1, 30)
    KEEPALIVE = 30
    #: how long ``close`` waits for the messages published but not yet acknowledged
    CLOSE_WAIT = 5.0

    def __init__(self, settings: MqttSettings, handler: Callable[[str, bytes], None] | None = None) -> None:
        require_extra("mqtt", "--mqtt", "paho")
        import paho.mqtt.client as mqtt

        self.settings = settings
        self.handler = handler
        self.connected = False
        self.messages = 0   # received
        self.published = 0
        self._ever = False      # connected once: later connections are reconnections
        self._troubled = False  # a failure was said and no connection came since
        self._closing = False
        self._pending: deque[Any] = deque()  # MQTTMessageInfo of QoS 1-2 messages not yet acknowledged
        self._lock = threading.Lock()
        self._client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=settings.client_id or "",
                                   clean_session=settings.client_id is None, protocol=mqtt.MQTTv311)
        if settings.username is not None:
            self._client.username_pw_set(settings.username, settings.password)
        self._client.reconnect_delay_set(*self.RECONNECT_DELAYS)
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message

    def start(self) -> None:
        """Connect on paho's thread (retried until it succeeds or ``close``)."""
        self._client.connect_async(self.settings.host, self.settings.port, self.KEEPALIVE)
        self._client.loop_start()

    def publish(self, topic: str, payload: str) -> None:
        """Publish ``payload`` to ``topic`` at the settings' QoS (queued while the connection is
        away, at QoS 1 and 2; at QoS 0 it is then lost)."""
        info = self._client.publish(topic, payload.encode("utf-8"), qos=self.settings.qos)
        with self._lock:
            self.published += 1
            if self.settings.qos:
                self._pending.append(info)
                while self._pending and self._pending[0].is_published():
                    self._pending.popleft()

    def close(self) -> None:
        """Wait up to ``CLOSE_WAIT`` s for the broker to acknowledge what was published (said
        when some is not), then disconnect and stop paho's thread; a second call does nothing."""
        if self._closing:
            return
        deadline = time.monotonic() + self.CLOSE_WAIT
        while self.unacknowledged() and time.monotonic() < deadline:
            time.sleep(0.02)
        left = self.unacknowledged()
        if left:
            log.warning("mqtt: %d message(s) published were not acknowledged by %s", left, self.settings.address)
        self._closing = True
        self._client.disconnect()
        self._client.loop_stop()

    def unacknowledged(self) -> int:
        """Messages published and not yet acknowledged (QoS 1 and 2)."""
        with self._lock:
            return sum(1 for info in self._pending if not info.is_published())

    # paho's callbacks (API version 2), on its thread

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:  # refused by the broker (credentials, client id): retried
            self._trouble(f"the broker {self.settings.address} refused the connection ({reason})")
            return
        self.connected = True
        filters = [(topic, self.settings.qos) for topic, _ in self.settings.subscribe]
        if filters:
            client.subscribe(filters)  # said once the broker acknowledges them
        else:
            self._connected()

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        refused = [topic for (topic, _), r in zip(self.settings.subscribe, reasons, strict=False) if r.is_failure]
        for topic in refused:
            log.warning("spaseq: mqtt %s: the broker refused the subscription", topic, extra={"line": True})
        self._connected(", subscribed to " + ", ".join(t for t, _ in self.settings.subscribe if t not in refused))

    def _connected(self, subscribed: str = "") -> None:
        again = self._ever
        self._ever = True
        self._troubled = False
        log.info("mqtt: %s %s%s", "reconnected to" if again else "connected to", self.settings.address, subscribed)

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._trouble(f"cannot connect to {self.settings.address}")

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        was = self.connected
        self.connected = False
        if was and not self._closing:
            self._trouble(f"lost the connection to {self.settings.address}")

    def _trouble(self, what: str) -> None:
        """Say a connection problem once per series of attempts (until one succeeds)."""
        if not self._troubled and not self._closing:
            self._troubled = True
            first, longest = self.RECONNECT_DELAYS
            log.warning("mqtt: %s; retrying every %s to %s s until it is back", what, first, longest)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        self.messages += 1
        if self.handler is None or self._closing:
            return
        try:
            self.handler(message.topic, message.payload)
        except Exception as exc:  # never out of paho's thread: the client would stop
            log.error("spaseq: mqtt %s: %s", message.topic, exc, extra={"line": True})


def subscription(topic: str, filters: Sequence[str]) -> int | None:
    """The index of the first filter ``topic`` matches (None: none)."""
    from paho.mqtt.client import topic_matches_sub

    return next((i for i, f in enumerate(filters) if topic_matches_sub(f, topic)), None)


class MessageInlets:
    """``spaseq run``'s subscriptions as native live sources (``Engine.run_live``'s
    ``inlets``): one ``LiveInlet`` per subscription, named ``mqtt TOPIC`` (a late event
    under ``--late error`` is ``mqtt TOPIC:N``, the subscription's N-th message); each
    message is read there whole, in ``forced`` format or the likelier one first, and one
    neither reads is refused (``Refused``). Messages that come before the engine opened
    its sources wait for it; after ``close``, they are dropped."""

    def __init__(self, subscriptions: Sequence[tuple[str, str]], refused: Refused, forced: str | None = None) -> None:
        self.streams = [(iri, f"mqtt {topic}") for topic, iri in subscriptions]
        self._filters = [topic for topic, _ in subscriptions]
        self._refused = refused
        self._forced = forced
        self._inlets: list[LiveInlet | None] = []
        self._numbers = [0] * len(subscriptions)
        self._open = threading.Event()
        self._closed = False

    def opened(self, inlets: list[LiveInlet | None]) -> None:
        """The engine's sources, one per subscription (None: a stream no query reads);
        closed at once when ``close`` came first (a signal while the run was starting)."""
        self._inlets = inlets
        self._open.set()
        if self._closed:
            self.close()

    def __call__(self, topic: str, payload: bytes) -> None:
        """A message, on the client's thread: its events sent to its subscription's source."""
        from spaseq.engine._native import LocatedError

        index = subscription(topic, self._filters)
        self._open.wait()
        if index is None or self._closed or self._inlets[index] is None:
            return
        inlet = self._inlets[index]
        assert inlet is not None
        self._numbers[index] += 1
        first: LocatedError | None = None
        for fmt in payload_formats(payload, self._forced):
            try:
                inlet.send(payload, fmt, self._numbers[index])
                return
            except LocatedError as exc:
                first = first or exc
        if first is not None and not self._closed:
            self._refused.add(topic, located(first))

    def close(self) -> None:
        """The end of every source (the run's input ends once the other sources have too)."""
        self._closed = True
        self._open.set()
        for inlet in self._inlets:
            if inlet is not None:
                inlet.close()
