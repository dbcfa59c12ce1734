"""Where the package index is: the settings `pip download` would use, read without pip.

Releases come through the index's simple API (`simple_api.py`), so driftaudit runs where
pip is absent (`uvx`, `pipx run`) and starts no pip. A user who points pip at a mirror
(a firewall that lets only the mirror through, a private index) keeps it: the settings are
read as pip reads them, later ones overriding earlier ones:

1. pip's configuration files, `[global]` then `[download]` of each: the global ones
   (`$XDG_CONFIG_DIRS/pip/pip.conf`, `/etc/pip.conf`), the user's (`~/.pip/pip.conf`,
   `$XDG_CONFIG_HOME/pip/pip.conf`), the interpreter's (`sys.prefix/pip.conf`), then
   `$PIP_CONFIG_FILE` (`os.devnull` there turns every file off, as in pip);
2. the environment: `PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_FIND_LINKS`,
   `PIP_NO_INDEX`, `PIP_CERT`, `PIP_PROXY`, `PIP_TIMEOUT`/`PIP_DEFAULT_TIMEOUT`;
3. `--index-url` (it replaces the index; extra indexes and find-links stay, as in pip).

Proxies also come from `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` (urllib reads them). Nothing
of the audited consumer is read here: its files are not the user's word.
"""

from __future__ import annotations

import configparser
import os
import sys
from dataclasses import dataclass

PYPI = "https://pypi.org/simple"
_DEFAULT_TIMEOUT = 15.0  # seconds, pip's default
_LISTS = ("extra-index-url", "find-links")
_KEYS = ("index-url", "extra-index-url", "find-links", "no-index", "cert", "proxy", "timeout")
_SECTIONS = ("global", "download")  # pip reads [global], then the command's own section
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class IndexSettings:
    index_url: str = PYPI
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    cert: str | None = None  # a CA bundle (else the system's trust store)
    proxy: str | None = None  # else the *_PROXY environment variables
    timeout: float = _DEFAULT_TIMEOUT

    @property
    def indexes(self) -> tuple[str, ...]:
        return () if self.no_index else (self.index_url, *self.extra_index_urls)


def _config_files(environ: dict[str, str]) -> list[str]:
    explicit = environ.get("PIP_CONFIG_FILE")
    if explicit == os.devnull:
        return []
    xdg_dirs = environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [os.path.join(d, "pip", "pip.conf") for d in xdg_dirs.split(os.pathsep) if d]
    files.append("/etc/pip.conf")
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(xdg_home, "pip", "pip.conf")]
    files.append(os.path.join(sys.prefix, "pip.conf"))
    if explicit:
        files.append(explicit)
    return files


def _from_files(paths: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in paths:
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue  # pip stops on a broken file; here it only costs its settings
        for section in _SECTIONS:
            if parser.has_section(section):
                for key, value in parser.items(section):
                    key = key.replace("_", "-")
                    if key == "default-timeout":
                        key = "timeout"
                    if key in _KEYS:
                        found[key] = value
    return found


def _from_environment(environ: dict[str, str]) -> dict[str, str]:
    found = {}
    for key in _KEYS:
        value = environ.get("PIP_" + key.upper().replace("-", "_"))
        if value is not None:
            found[key] = value
    timeout = environ.get("PIP_DEFAULT_TIMEOUT")
    if timeout is not None and "PIP_TIMEOUT" not in environ:
        found["timeout"] = timeout
    return found


def index_settings(
    index_url: str | None = None, environ: dict[str, str] | None = None
) -> IndexSettings:
    """The settings in force: pip's files, then its environment, then `index_url`."""
    environ = dict(os.environ) if environ is None else environ
    raw = _from_files(_config_files(environ))
    raw.update(_from_environment(environ))
    if index_url:
        raw["index-url"] = index_url
    lists = {key: tuple(raw.get(key, "").split()) for key in _LISTS}
    try:
        timeout = float(raw.get("timeout", _DEFAULT_TIMEOUT))
    except ValueError:
        timeout = _DEFAULT_TIMEOUT
    return IndexSettings(
        index_url=(raw.get("index-url") or "").strip() or PYPI,
        extra_index_urls=lists["extra-index-url"],
        find_links=lists["find-links"],
        no_index=raw.get("no-index", "").strip().lower() in _TRUE,
        cert=raw.get("cert") or None,
        proxy=raw.get("proxy") or None,
        timeout=timeout if timeout > 0 else _DEFAULT_TIMEOUT,
    )
