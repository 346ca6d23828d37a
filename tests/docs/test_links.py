"""The documentation a clone carries is whole: every relative link in the README, the
CHANGELOG and docs/*.md opens a file of the repository (none points outside it), and the
semantics is linked from the README and the decisions log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def links(page: Path) -> list[str]:
    """The targets of the page's inline Markdown links, outside code blocks."""
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def broken(page: Path, root: Path) -> list[str]:
    """The page's relative links that leave ``root`` or name no existing file."""
    problems = []
    for target in links(page):
        if SCHEME.match(target) or target.startswith("#"):
            continue  # a web address, or a place in the page itself
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(root):
            problems.append(f"{target}: outside the repository")
        elif not path.exists():
            problems.append(f"{target}: no such file")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_open_files_of_the_repository(page: Path) -> None:
    assert broken(page, ROOT) == []


def test_a_missing_file_and_a_link_outside_are_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "here.md").write_text("x")
    page = tmp_path / "README.md"
    page.write_text("[a](docs/here.md) [b](docs/gone.md#x) [c](../shared/S.md) [d](https://x.org/y)\n"
                    "```\n[e](not/a/link.md)\n```\n[f](#top)\n")
    assert broken(page, tmp_path) == ["docs/gone.md#x: no such file", "../shared/S.md: outside the repository"]


def test_semantics_is_linked_from_the_readme_and_the_decisions() -> None:
    assert "docs/semantics.md" in links(ROOT / "README.md")
    assert "semantics.md" in links(ROOT / "docs" / "decisions.md")


def test_decisions_cited_by_the_semantics_exist() -> None:
    decisions = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    numbers = {int(n) for n in re.findall(r"^(\d+)\. \*\*", decisions, re.M)}
    text = (ROOT / "docs" / "semantics.md").read_text(encoding="utf-8")
    cited = {int(n) for group in re.findall(r"decisions? (\d+(?: and \d+)?)", text)
             for n in re.findall(r"\d+", group)}
    assert len(cited) > 10 and cited <= numbers, sorted(cited - numbers)
