"""The cache of checked queries (engine/language/cache.py): a query file parsed before is read
back without the parser, equal to what parsing gives; never for another text, file name or
version of the code; never an error; never from a folder others can write to."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from spaseq.engine.errors import QueryError
from spaseq.engine.language import cache
from spaseq.engine.language.query import load_query, parse_query

QUERY = """PREFIX : <http://ex.org/>
SELECT ?s ?a WITHIN 10 SECONDS
FROM STREAM S1 <http://ex.org/s1>
WHERE { SEQ(A; B) DEFINE GPM A ON S1 { ?s :a ?a } DEFINE GPM B ON S1 { ?s :b ?b } }
"""


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """A cache folder of the test's own."""
    out = tmp_path / "cache"
    monkeypatch.setenv("SPASEQ_QUERY_CACHE", str(out))
    return out


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.pickle")) if folder.exists() else []


def test_a_query_parsed_once_is_read_back_equal(folder, tmp_path) -> None:
    path = tmp_path / "q.rq"
    path.write_text(QUERY)
    first = load_query(str(path))
    assert len(entries(folder)) == 1
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    again = load_query(str(path))
    assert again == first == parse_query(QUERY, str(path))
    assert len(entries(folder)) == 1


def test_the_cached_run_does_not_import_the_parser(folder, tmp_path) -> None:
    """The point of the cache: the second process reads the query without lark."""
    path = tmp_path / "q.rq"
    path.write_text(QUERY)
    probe = ("import sys; from spaseq.engine.language.query import load_query; "
             f"q = load_query({str(path)!r}); print('lark' in sys.modules, q.streams)")
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**os.environ, "SPASEQ_QUERY_CACHE": str(folder)}, check=True).stdout
            for _ in range(2)]
    assert runs == ["True {'S1': 'http://ex.org/s1'}\n", "False {'S1': 'http://ex.org/s1'}\n"]


def test_another_text_or_file_name_is_another_entry(folder, tmp_path) -> None:
    """A changed query is parsed again; the file name is part of the key (warnings and
    locations name it)."""
    one, two = tmp_path / "one.rq", tmp_path / "two.rq"
    one.write_text(QUERY)
    two.write_text(QUERY)
    assert load_query(str(one)).file == str(one) and load_query(str(two)).file == str(two)
    assert len(entries(folder)) == 2
    one.write_text(QUERY.replace("10 SECONDS", "20 SECONDS"))
    changed = load_query(str(one))
    assert changed.window is not None and changed != load_query(str(two))
    assert changed == parse_query(one.read_text(), str(one))
    assert len(entries(folder)) == 3


def test_errors_are_never_cached(folder, tmp_path) -> None:
    path = tmp_path / "bad.rq"
    path.write_text(QUERY.replace("SEQ(A; B)", "SEQ(A; C)"))
    for _ in range(2):
        with pytest.raises(QueryError):
            load_query(str(path))
    assert entries(folder) == []


def test_a_damaged_entry_is_parsed_again_and_rewritten(folder, tmp_path) -> None:
    path = tmp_path / "q.rq"
    path.write_text(QUERY)
    expected = load_query(str(path))
    (entry,) = entries(folder)
    for damage in (b"not a pickle", pickle.dumps("a string, not a query")):
        entry.write_bytes(damage)
        assert load_query(str(path)) == expected
        assert pickle.loads(entry.read_bytes()) == expected


def test_a_folder_others_can_write_to_is_not_read(folder, tmp_path) -> None:
    """An entry is a pickle: one planted in a shared folder must not be loaded."""
    path = tmp_path / "q.rq"
    path.write_text(QUERY)
    expected = load_query(str(path))
    (entry,) = entries(folder)
    other = parse_query(QUERY.replace("10 SECONDS", "99 SECONDS"), str(path))
    entry.write_bytes(pickle.dumps(other))
    assert load_query(str(path)) == other  # the folder is private: the entry is trusted
    folder.chmod(0o777)
    try:
        assert load_query(str(path)) == expected
        assert pickle.loads(entry.read_bytes()) == other  # nor written to
    finally:
        folder.chmod(0o700)


def test_off_writes_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SPASEQ_QUERY_CACHE", "off")
    monkeypatch.delenv("SPASEQ_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "q.rq"
    path.write_text(QUERY)
    assert cache.query_cache_dir() is None
    assert load_query(str(path)) == parse_query(QUERY, str(path))
    assert not (tmp_path / "xdg").exists()
    monkeypatch.delenv("SPASEQ_QUERY_CACHE")
    assert cache.query_cache_dir() == tmp_path / "xdg" / "spaseq" / "queries"


def test_entries_are_pruned_oldest_first(folder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 6)
    paths = []
    for i in range(20):
        path = tmp_path / f"q{i}.rq"
        path.write_text(QUERY)
        load_query(str(path))
        paths.append(path)
        load_query(str(paths[0]))  # the first one stays in use
        assert len(entries(folder)) <= 6
    before = len(entries(folder))
    load_query(str(paths[0]))
    assert len(entries(folder)) == before  # still there: read, not written again


def test_the_key_follows_the_code(tmp_path) -> None:
    """Editing a source file (its size or modification time) changes the fingerprint."""
    import hashlib

    (tmp_path / "m.py").write_text("x = 1\n")

    def digest() -> str:
        d = hashlib.sha256()
        cache._digest_tree(str(tmp_path), d)
        return d.hexdigest()

    before = digest()
    assert digest() == before
    os.utime(tmp_path / "m.py", ns=(1, 1))
    assert digest() != before
