"""``spaseq serve --mqtt`` (docs/decisions.md 74): each message of a ``--subscribe``d topic
pushed as a ``POST /events`` batch is (``EngineService.push``: read whole, all or nothing,
journaled with ``--data``), and each ``--publish QUERY=TOPIC`` query's numbered matches
published to TOPIC as they are logged, each its jsonl object with its number first as
``"id"`` (``Entry.numbered``: what ndjson followers get, so a subscriber drops a message QoS 1
delivered twice, or fills a gap with ``?since=``). Messages refused are said on stderr and counted for ``GET /``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from spaseq.engine.io.mqtt import MqttClient, MqttSettings, Refused, payload_formats, subscription

from . import negotiation as mt
from .matchlog import Expired
from .service import EngineService, ServiceError

log = logging.getLogger(__name__)

#: a message's format as the media type of the batch it is pushed as
MEDIA = {"trig": mt.TRIG, "nquads": mt.NQUADS}


class MqttBridge:
    """The broker's client of one server: messages in as batches, matches out."""

    def __init__(self, service: EngineService, settings: MqttSettings) -> None:
        self.service = service
        self.settings = settings
        self.refused = Refused()
        self.events = 0  # events accepted from messages
        self.client = MqttClient(settings, self._message)
        self._filters = [topic for topic, _ in settings.subscribe]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task] = []
        self._stopping = False

    async def start(self) -> None:
        """Connect (in the background) and follow the published queries."""
        self._loop = asyncio.get_running_loop()
        self.client.start()
        self._tasks = [asyncio.create_task(self._publish(qid, topic)) for qid, topic in self.settings.publish]

    async def stop(self) -> None:
        """Stop following, let paho's thread finish the message it holds (the engine still
        running), deliver what was published and disconnect."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(self.client.close)

    def status(self) -> dict[str, Any]:
        """For ``GET /``: the broker, whether connected, messages received, events accepted
        from them, messages refused per topic, matches published."""
        return {"broker": self.settings.address, "connected": self.client.connected,
                "messages": self.client.messages, "events": self.events,
                "refused": dict(self.refused.counts), "published": self.client.published}

    def _message(self, topic: str, payload: bytes) -> None:
        """A message, on paho's thread: pushed as a batch of its subscription's stream, in the
        likelier format first; refused (said, counted) when neither reads it or the engine
        refuses it (``--late error``)."""
        index = subscription(topic, self._filters)
        if index is None or self._stopping or self._loop is None:
            return
        stream = self.settings.subscribe[index][1]
        first: ServiceError | None = None
        for fmt in payload_formats(payload):
            future = asyncio.run_coroutine_threadsafe(self.service.push(stream, payload, MEDIA[fmt]), self._loop)
            try:
                accepted, _, _ = future.result()
            except ServiceError as exc:
                if exc.status != 400:  # read, but refused (a late event under --late error)
                    self.refused.add(topic, exc.message)
                    return
                first = first or exc
                continue
            self.events += accepted
            return
        assert first is not None
        self.refused.add(topic, first.message)

    async def _publish(self, qid: str, topic: str) -> None:
        """Publish the query's matches as they are logged, from those logged after the server
        started (all of a query registered later)."""
        reg = self.service.queries.get(qid)
        cursor = len(reg.log) if reg is not None else 0
        while True:
            waiter = self.service.changed
            reg = self.service.queries.get(qid)
            if reg is not None:
                try:
                    entries = reg.log.since(cursor)
                except Expired as exc:  # dropped before they were published (--keep-matches)
                    log.warning("mqtt: matches %d to %d of %s were dropped before being published",
                                cursor + 1, exc.first - 1, qid)
                    cursor = exc.first - 1
                    continue
                for entry in entries:
                    self.client.publish(topic, entry.numbered)
                    cursor = entry.seq
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(waiter.wait(), 1.0)
