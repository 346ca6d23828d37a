"""The README against what the code accepts. Its synopsis of the ``spaseq`` command (the first
``sh`` block under "The `spaseq` command") against the parser ``--help`` is made from: every
flag the synopsis gives a command is one of that command's, and every flag of a command is in
its synopsis line (or, where the line elides them with ``... (see "Section")``, somewhere in
the README); every command has a line or a section. And the window units it names are the
language's."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from spaseq.engine.cli.main import build_parser
from spaseq.engine.language.translate import EVENT_UNITS, TIME_UNITS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
#: flags every command takes from the top-level parser (the synopsis shows them once, short)
GLOBAL = {"--help", "--quiet", "--verbose"}
FLAG = re.compile(r"--[a-z][a-z-]*")


def commands() -> dict[tuple[str, ...], set[str]]:
    """Each leaf command (``("run",)``, ``("kb", "load")``...) and its long flags."""
    out: dict[tuple[str, ...], set[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if path and not subs:
            out[path] = {o for a in parser._actions for o in a.option_strings if o.startswith("--")} - GLOBAL
        for sub in subs:
            for name, child in sub.choices.items():
                walk(child, (*path, name))

    walk(build_parser(), ())
    return out


def synopsis() -> dict[tuple[str, ...], str]:
    """Each command's entry in the synopsis block: its line and the indented lines after it."""
    section = README[README.index("## The `spaseq` command"):]
    block = section[section.index("```sh\n") + 6:section.index("```", section.index("```sh\n") + 6)]
    entries: list[str] = []
    for line in block.splitlines():
        if line.startswith((" ", "\t")) and entries:
            entries[-1] += " " + line.strip()
        else:
            entries += [part.strip() for part in re.split(r"\s\|\s(?=spaseq )", line)]
    out: dict[tuple[str, ...], str] = {}
    for entry in entries:
        words = entry.removeprefix("spaseq").split()
        if not words or not re.fullmatch(r"[a-z|]+", words[0]):
            continue  # `spaseq --version`, `spaseq [-q | ...] COMMAND`
        heads = [(w,) for w in words[0].split("|")]
        if len(words) > 1 and re.fullmatch(r"[a-z|]+", words[1]):
            heads = [(words[0], w) for w in words[1].split("|")]
        for head in heads:
            out[head] = entry
    return out


def test_every_command_has_a_synopsis_line_or_a_section() -> None:
    lines = synopsis()
    assert {("run",), ("explain",), ("kb", "load"), ("kb", "refresh"), ("kb", "info"), ("kb", "query"),
            ("kb", "prepare")} <= set(lines) <= set(commands())
    for command in set(commands()) - set(lines):  # documented in a section of its own
        assert f"spaseq {' '.join(command)} " in README, command


def test_the_synopsis_flags_are_the_parsers() -> None:
    parsed = commands()
    for command, entry in synopsis().items():
        given = set(FLAG.findall(entry))
        assert given <= parsed[command], (command, given - parsed[command])
        if re.search(r"\s\.\.\.\s+\(see ", entry):  # `... (see "Section")`: the rest told there
            missing = {f for f in parsed[command] if not re.search(re.escape(f) + r"(?![\w-])", README)}
        else:
            missing = parsed[command] - given
        assert not missing, (command, sorted(missing))


def test_every_flag_is_in_the_readme() -> None:
    for command, flags in commands().items():
        missing = sorted(f for f in flags if not re.search(re.escape(f) + r"(?![\w-])", README))
        assert not missing, (command, missing)


def test_the_readme_names_every_window_unit() -> None:
    """Every spelling the language accepts is named (a singular by its plural), and nothing
    else."""
    start = README.index("`WITHIN n SECONDS|MINUTES|HOURS`")
    told = {u.lower() for u in re.findall(r"`([A-Z]+)`", README[start:start + 600])}
    told -= {"within", "lateness", "tumbling"}
    names = {*TIME_UNITS, *EVENT_UNITS}
    assert told <= names
    assert {n for n in names if n not in told and n + "s" not in told} == set()
