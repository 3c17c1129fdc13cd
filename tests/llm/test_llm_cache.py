import subprocess
import sys
import threading
from pathlib import Path

from hti_git.llm.cache import ResponseCache, cache_key
from hti_git.llm.provider import Completion, Usage
from hti_git.text import canonical_json

MESSAGES = [{"role": "user", "content": "Who may terminate?"}]


def test_key_is_canonical_and_named():
    a = cache_key("m", MESSAGES, {"type": "object", "properties": {}}, {"temperature": 0, "max": 5})
    b = cache_key("m", MESSAGES, {"properties": {}, "type": "object"}, {"max": 5, "temperature": 0})
    assert a == b and a.startswith("sha256:") and len(a) == 7 + 64
    assert cache_key("m2", MESSAGES, None, {}) != cache_key("m", MESSAGES, None, {})
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


def test_put_get_stats_clear(tmp_path):
    path = tmp_path / ".git" / "hti" / "cache.sqlite"
    with ResponseCache(path) as cache:
        key = cache_key("m", MESSAGES, None, {})
        assert cache.get(key) is None
        cache.put(key, Completion("hi", {"a": 1}, Usage(10, 2, 3), "m"))
        hit = cache.get(key)
        assert hit == Completion("hi", {"a": 1}, Usage(10, 2, 3), "m", cached=True)
        stats = cache.stats()
        assert stats["entries"] == 1 and stats["models"] == {"m": 1} and stats["enabled"]
        assert cache.clear() == 1
        assert cache.get(key) is None
    with ResponseCache(path) as again:  # persisted across instances
        assert again.stats()["entries"] == 0
    assert path.parent.is_dir()


def test_wal_mode(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache._conn().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_disabled_cache_never_hits():
    cache = ResponseCache.disabled()
    cache.put("k", Completion("x"))
    assert cache.get("k") is None
    assert cache.stats()["enabled"] is False
    assert cache.clear() == 0


def test_concurrent_thread_writers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")

    def write(n):
        for i in range(50):
            cache.put(f"k{n}-{i}", Completion(f"{n}-{i}", model="m"))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.stats()["entries"] == 400 and cache.errors == 0
    assert cache.get("k3-7").text == "3-7"
    cache.close()


def test_concurrent_process_writers(tmp_path):
    path = tmp_path / "c.sqlite"
    root = Path(__file__).resolve().parents[2]
    script = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "from hti_git.llm.cache import ResponseCache\n"
        "from hti_git.llm.provider import Completion\n"
        f"c = ResponseCache({str(path)!r})\n"
        "n = sys.argv[1]\n"
        "for i in range(100): c.put(f'{n}-{i}', Completion('x', model='m'))\n"
        "assert c.errors == 0, c.errors\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    with ResponseCache(path) as cache:
        assert cache.stats()["entries"] == 400


def test_corrupt_entry_is_a_miss(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache._conn().execute("INSERT INTO responses VALUES ('k', 'm', 'not json')")
        assert cache.get("k") is None
        assert cache.errors == 1
