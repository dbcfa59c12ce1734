"""Releases through the index's simple API, without pip: PEP 691 JSON and PEP 503 HTML,
file:// indexes and find-links, the index's sha256, wheel tags, yanked files, the
settings pip would use, credentials and proxies. A loopback index (tests/fake_index.py)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import urllib.parse

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.sources import configure_sources, resolve_spec
from driftaudit.sources import index as index_source
from driftaudit.sources.index_settings import PYPI, index_settings
from driftaudit.sources.simple_api import DistFile

from .fake_index import FakeIndex, build_wheel


@pytest.mark.parametrize("mode", ["json", "html", "negotiate"])
def test_a_release_comes_from_the_simple_api(fake_index, cache_dir, mode):
    fake_index.mode = mode
    fake_index.add("1.2.3")
    tree = resolve_spec("1.2.3", cache_dir)
    assert tree.version == "1.2.3" and (tree.root / "sglang" / "m0.py").is_file()
    assert not (tree.root / "tools").exists(), "only the sglang package is unpacked"
    assert fake_index.downloads() == ["sglang-1.2.3-py3-none-any.whl"]


def test_no_pip_and_no_child_process(fake_index, cache_dir, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    fake_index.add("1.2.3")
    assert resolve_spec("1.2.3", cache_dir).version == "1.2.3"
    assert index_source.available_versions() == ["1.2.3"]


def test_a_wheel_that_does_not_match_the_index_hash_is_refused(fake_index, cache_dir):
    wheel = fake_index.add("1.2.3")
    fake_index.hashes[wheel.name] = hashlib.sha256(b"something else").hexdigest()
    with pytest.raises(DriftauditError, match="does not match the index's sha256"):
        resolve_spec("1.2.3", cache_dir)
    assert not index_source.release_dir(cache_dir, "1.2.3").exists()


def test_a_remote_wheel_without_a_hash_is_refused(fake_index, cache_dir):
    wheel = fake_index.add("1.2.3")
    fake_index.hashes[wheel.name] = None
    with pytest.raises(DriftauditError, match="gives no sha256"):
        resolve_spec("1.2.3", cache_dir)
    assert fake_index.downloads() == []


def test_the_wheel_this_interpreter_would_install_is_taken(fake_index, cache_dir):
    from packaging.tags import sys_tags

    best = next(iter(sys_tags()))
    files = {"sglang/__init__.py": "", "sglang/which.py": "X = 'native'\n"}
    fake_index.add("1.2.3", files={**files, "sglang/which.py": "X = 'foreign'\n"},
                   tag="cp27-cp27m-win32")  # fmt: skip
    fake_index.add("1.2.3", files={**files, "sglang/which.py": "X = 'pure'\n"})
    fake_index.add("1.2.3", files=files, tag=f"{best.interpreter}-{best.abi}-{best.platform}")
    tree = resolve_spec("1.2.3", cache_dir)
    assert (tree.root / "sglang" / "which.py").read_text() == "X = 'native'\n"


def test_a_wheel_for_another_platform_is_taken_when_there_is_no_other(fake_index, cache_dir):
    """sglang 0.5.11 on: manylinux x86_64 wheels only; the source is the same on a Mac."""
    fake_index.add("1.2.3", tag="cp27-cp27m-win32")
    tree = resolve_spec("1.2.3", cache_dir)
    assert tree.version == "1.2.3"
    assert fake_index.downloads() == ["sglang-1.2.3-cp27-cp27m-win32.whl"]


def test_yanked_releases_are_not_latest_but_can_be_asked_for(fake_index, capsys, cache_dir):
    fake_index.add("1.0.0")
    fake_index.yanked.add(fake_index.add("1.1.0").name)
    assert index_source.available_versions() == ["1.0.0"]
    assert resolve_spec("latest", cache_dir).version == "1.0.0"
    assert resolve_spec("1.1.0", cache_dir).version == "1.1.0"
    assert "sglang 1.1.0 is yanked" in capsys.readouterr().err


def test_an_unreachable_index_is_one_line(monkeypatch, cache_dir):
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", "http://user:secret@127.0.0.1:9/simple")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(DriftauditError) as caught:
        resolve_spec("1.2.3", cache_dir)
    message = str(caught.value)
    assert message.startswith("could not download sglang==1.2.3: cannot read the package index")
    assert "127.0.0.1:9" in message and "secret" not in message and "\n" not in message


def test_a_file_index_and_find_links(tmp_path, monkeypatch, cache_dir):
    """pip's file:// indexes (a folder per project, its index.html) and find-links (a
    folder of files): how this machine's own pip config serves packages."""
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    local = FakeIndex(tmp_path / "built")
    try:
        local.add("1.0.0")
        index_url = local.write_file_index(tmp_path / "simple")
    finally:
        local.close()
    links = tmp_path / "links"
    build_wheel(links, "1.1.0")
    (links / "unrelated-1.0-py3-none-any.whl").write_bytes(b"")
    monkeypatch.setenv("PIP_INDEX_URL", index_url)
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", (tmp_path / "missing").as_uri())
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    assert index_source.available_versions() == ["1.1.0", "1.0.0"]
    assert resolve_spec("1.0.0", cache_dir).version == "1.0.0"
    assert resolve_spec("1.1.0", cache_dir).version == "1.1.0"


def test_credentials_in_the_index_url_go_to_its_host_as_a_header(fake_index, cache_dir):
    seen = []
    handler = fake_index.server.RequestHandlerClass
    original = handler.do_GET

    def record(self):
        seen.append((self.path, self.headers.get("Authorization")))
        original(self)

    handler.do_GET = record
    url = urllib.parse.urlsplit(fake_index.url)
    configure_sources(index_url=url._replace(netloc=f"u%40x:p%3Aw@{url.netloc}").geturl())
    fake_index.add("1.2.3")
    assert resolve_spec("1.2.3", cache_dir).version == "1.2.3"
    expected = "Basic " + __import__("base64").b64encode(b"u@x:p:w").decode()
    assert seen and all(auth == expected for _, auth in seen)


def test_an_http_proxy_is_used(fake_index, cache_dir, monkeypatch):
    """HTTP_PROXY (urllib's): every request goes to the proxy, here the fake index itself,
    which answers for any host."""
    monkeypatch.setenv(
        "HTTP_PROXY", urllib.parse.urlsplit(fake_index.url)._replace(path="").geturl()
    )
    monkeypatch.delenv("NO_PROXY")
    monkeypatch.delenv("no_proxy")
    configure_sources(index_url="http://index.invalid/simple")
    fake_index.add("1.2.3")
    assert resolve_spec("1.2.3", cache_dir).version == "1.2.3"
    assert any(r.startswith("http://index.invalid/simple/sglang") for r in fake_index.raw)


def test_settings_are_read_as_pip_reads_them(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = https://mirror/simple\nextra-index-url =\n"
        "    https://a/simple\n    https://b/simple\ntimeout = 60\n"
        "[download]\nfind-links = /wheels\n[install]\nindex-url = https://not-for-download\n"
    )
    base = {"HOME": str(tmp_path), "XDG_CONFIG_DIRS": str(tmp_path / "none")}
    settings = index_settings(environ={**base, "PIP_CONFIG_FILE": str(conf)})
    assert settings.index_url == "https://mirror/simple"
    assert settings.extra_index_urls == ("https://a/simple", "https://b/simple")
    assert settings.find_links == ("/wheels",) and settings.timeout == 60
    env = {**base, "PIP_CONFIG_FILE": str(conf), "PIP_INDEX_URL": "https://env/simple"}
    env["PIP_EXTRA_INDEX_URL"] = "https://c/simple"
    settings = index_settings(environ=env)
    assert settings.index_url == "https://env/simple"
    assert settings.extra_index_urls == ("https://c/simple",)
    settings = index_settings("https://option/simple", environ=env)
    assert settings.indexes == ("https://option/simple", "https://c/simple")
    assert index_settings(environ={**base, "PIP_CONFIG_FILE": os.devnull}).index_url == PYPI
    user = tmp_path / ".config" / "pip" / "pip.conf"
    user.parent.mkdir(parents=True)
    user.write_text("[global]\nindex-url = https://user/simple\nno-index = yes\n")
    settings = index_settings(environ=base)
    assert settings.index_url == "https://user/simple" and settings.indexes == ()


def test_a_relative_find_links_path_is_not_read(tmp_path, monkeypatch):
    """A relative path would be the working directory's: in CI, the consumer's tree."""
    from driftaudit.sources.simple_api import Client, Listing

    build_wheel(tmp_path / "wheels", "6.6.6")
    monkeypatch.chdir(tmp_path)
    settings = index_settings(environ={"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
                                       "PIP_FIND_LINKS": "wheels"})  # fmt: skip
    assert Listing(Client(settings), "sglang").files == []


def test_pep_691_and_503_pages_are_read_alike():
    from driftaudit.sources.simple_api import _html_files, _json_files

    page = "https://host/simple/sglang/"
    html = (
        '<a href="../../f/sglang-1-py3-none-any.whl#sha256=AB" data-yanked="">x</a>'
        '<a href="https://cdn/sglang-2.tar.gz#md5=00">y</a>'
    )
    json_page = (
        b'{"files": [{"filename": "sglang-1-py3-none-any.whl", "url": "../../f/sglang-1-py3-'
        b'none-any.whl", "hashes": {"sha256": "AB"}, "yanked": "bad"}, {"filename": '
        b'"sglang-2.tar.gz", "url": "https://cdn/sglang-2.tar.gz", "hashes": {}}]}'
    )
    wheel = DistFile(
        "sglang-1-py3-none-any.whl", "https://host/f/sglang-1-py3-none-any.whl", {"sha256": "ab"},
        True,
    )  # fmt: skip
    sdist = DistFile("sglang-2.tar.gz", "https://cdn/sglang-2.tar.gz", {}, False)
    assert _html_files(html, page) == [wheel, sdist]
    assert _json_files(json_page, page) == [wheel, sdist]
