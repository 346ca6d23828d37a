"""The README's MQTT example run as written (its port replaced by the test broker's):
``spaseq run`` subscribed and publishing, ``mosquitto_sub`` printing what it publishes, the
``mosquitto_pub`` loop sending the events; the matches are those the README says."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading

import pytest

from .conftest import ROOT, Client, Spaseq

README_PORT = "1883"


def test_readme_mqtt_example(broker) -> None:
    if shutil.which("mosquitto_sub") is None or shutil.which("mosquitto_pub") is None:
        pytest.skip("mosquitto-clients is not installed: make broker")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- mqtt-example[^>]*-->\n```sh\n(.*?)```\n.*?```sh\n(.*?)```\n\n```sh\n(.*?)```",
                      readme, re.S)
    assert found is not None, "the MQTT example is missing from the README"
    run, sub, pub = (block.replace(f":{README_PORT}", f":{broker.port}").replace(f"-p {README_PORT}", f"-p {broker.port}")
                     for block in found.groups())
    args = run.replace("\\\n", " ").split()
    assert args[0] == "spaseq"
    spaseq = Spaseq(*args[1:])
    spaseq.wait_for(f"connected to {broker.address}, subscribed to home/readings")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    follower = subprocess.Popen(["bash", "-c", sub], stdout=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in follower.stdout], daemon=True).start()  # type: ignore[union-attr]
    probe = Client(broker.port)
    try:
        for _ in range(100):  # mosquitto_sub says nothing when it has subscribed: a probe tells
            probe.publish("home/alerts", "probe")
            try:
                if lines.get(timeout=0.2).strip() == "probe":
                    break
            except queue.Empty:
                continue
        subprocess.run(["bash", "-e", "-c", pub], check=True, timeout=30, env=env, cwd=ROOT)
        printed = []
        while len(printed) < 2:
            line = lines.get(timeout=20).strip()
            if line != "probe":
                printed.append(json.loads(line))
    finally:
        probe.close()
        follower.kill()
        follower.wait()
    status, out = spaseq.stop()
    assert status == 0, spaseq.stderr
    rows = [(m["time"], m["bindings"]["v1"]["value"], m["bindings"]["v2"]["value"]) for m in printed]
    assert rows == [(2, "60", "70"), (3, "70", "80")]
    assert [json.loads(line) for line in out.splitlines()] == printed
