"""The package index's simple API, read with urllib: a project's files, and a download
checked against the hash the index gives.

A project page is asked for as PEP 691 JSON and read as PEP 503 HTML when the index
answers with HTML (a `file://` index, most mirrors). Every index of the settings is read,
then the find-links (a folder of files, or an HTML page of links), as pip merges them.
An index that has no page for the project (404, no such folder) lists nothing; one that
cannot be reached is reported by the caller only if the file it wanted was not found
elsewhere. Credentials in an index URL (`https://user:token@host/simple`) or in
`~/.netrc` go to that host only, and never into a message.
"""

from __future__ import annotations

import hashlib
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from driftaudit import __version__
from driftaudit.errors import DriftauditError
from driftaudit.sources.index_settings import IndexSettings

_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
    "text/html;q=0.01"
)
_JSON_TYPE = "application/vnd.pypi.simple.v1+json"
_HASHES = ("sha256", "sha512", "sha384")  # the strongest the index gives is checked
_ATTEMPTS = 3  # pip retries too: a reset connection or a 5xx is often gone a second later
_CHUNK = 1 << 20
_MAX_PAGE = 64 << 20  # a project page larger than this is no listing


@dataclass(frozen=True)
class DistFile:
    filename: str
    url: str
    hashes: dict[str, str] = field(default_factory=dict)
    yanked: bool = False


class _Unreachable(Exception):
    """An index or file that could not be read (said once, in the caller's words)."""


def redact(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class Client:
    """One opener (proxy, CA bundle, timeout) and the credentials of each host."""

    def __init__(self, settings: IndexSettings):
        import ssl

        self.settings = settings
        context = ssl.create_default_context(cafile=settings.cert) if settings.cert else None
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
        if settings.proxy:
            proxy = settings.proxy if "://" in settings.proxy else "http://" + settings.proxy
            handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
        self._opener = urllib.request.build_opener(*handlers)  # env proxies otherwise
        self._auth: dict[str, str | None] = {}  # host[:port] -> "Basic ...", None: none
        for url in (*settings.indexes, *settings.find_links):
            self._remember_credentials(url)

    def _remember_credentials(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme in ("http", "https") and parts.username is not None:
            import base64

            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            self._auth[parts.netloc.rpartition("@")[2]] = "Basic " + token

    def _authorization(self, netloc: str) -> str | None:
        if netloc not in self._auth:
            import netrc

            try:
                entry = netrc.netrc().authenticators(netloc.partition(":")[0])
            except (OSError, netrc.NetrcParseError):
                entry = None
            self._auth[netloc] = None
            if entry:
                import base64

                token = base64.b64encode(f"{entry[0]}:{entry[2]}".encode()).decode()
                self._auth[netloc] = "Basic " + token
        return self._auth[netloc]

    def open(self, url: str, accept: str | None = None):
        """The response to a GET of `url` (credentials moved into a header), retried on
        what is likely transient; `_Unreachable` with the reason otherwise. None on 404."""
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        request = urllib.request.Request(urllib.parse.urlunsplit(parts._replace(netloc=netloc)))
        request.add_header("User-Agent", f"driftaudit/{__version__}")
        if accept:
            request.add_header("Accept", accept)
        remote = parts.scheme in ("http", "https")
        authorization = self._authorization(netloc) if remote else None
        if authorization:
            request.add_unredirected_header("Authorization", authorization)
        attempts = _ATTEMPTS if remote else 1
        for attempt in range(attempts):
            try:
                return self._opener.open(request, timeout=self.settings.timeout)
            except urllib.error.HTTPError as exc:
                exc.close()
                if exc.code in (404, 410):
                    return None
                reason = f"HTTP {exc.code} {exc.reason}"
                if exc.code < 500:
                    raise _Unreachable(reason) from None
            except (urllib.error.URLError, OSError, ValueError) as exc:  # ValueError: a bad URL
                reason = str(getattr(exc, "reason", None) or exc)
            if attempt + 1 < attempts:
                time.sleep(0.5 * (attempt + 1))
        raise _Unreachable(reason)


def _read(response, limit: int) -> bytes:
    import http.client

    try:
        data = response.read(limit + 1)
    except (OSError, http.client.HTTPException) as exc:
        raise _Unreachable(f"the answer broke off: {exc}") from None
    if len(data) > limit:
        raise _Unreachable("the answer is too large")
    if (response.headers.get("Content-Encoding") or "").lower() == "gzip":
        import gzip

        data = gzip.decompress(data)
    return data


class _Links(HTMLParser):
    """The `<a href>` of a PEP 503 page, with `data-yanked`, under its `<base href>`."""

    def __init__(self, url: str):
        super().__init__(convert_charrefs=True)
        self.base = url
        self.links: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        href = values.get("href")
        if tag == "base" and href:
            self.base = urllib.parse.urljoin(self.base, href)
        elif tag == "a" and href:
            self.links.append((urllib.parse.urljoin(self.base, href), "data-yanked" in values))


def _html_files(text: str, url: str) -> list[DistFile]:
    parser = _Links(url)
    parser.feed(text)
    files = []
    for link, yanked in parser.links:
        parts = urllib.parse.urlsplit(link)
        name = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
        algorithm, _, digest = parts.fragment.partition("=")
        hashes = {algorithm: digest.lower()} if algorithm in _HASHES and digest else {}
        files.append(DistFile(name, parts._replace(fragment="").geturl(), hashes, yanked))
    return files


def _json_files(data: bytes, url: str) -> list[DistFile]:
    import json

    try:
        page = json.loads(data)
        entries = page["files"]
        return [
            DistFile(
                str(entry["filename"]),
                urllib.parse.urljoin(url, str(entry["url"])),
                {k: str(v).lower() for k, v in (entry.get("hashes") or {}).items()},
                bool(entry.get("yanked")),
            )
            for entry in entries
        ]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _Unreachable("its answer is not a PEP 691 project page") from None


def _local_path(url: str) -> str | None:
    """The file-system path a find-links entry or file:// URL names, if it is local."""
    if url.startswith("file:"):
        return urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    if "://" not in url:
        path = os.path.expanduser(url)
        # a relative path would be read from the working directory: the consumer's tree
        return path if os.path.isabs(path) else None
    return None


class Listing:
    """Every file of `project` the settings' indexes and find-links list, and the
    sources that could not be read (`problems`: "URL: reason")."""

    def __init__(self, client: Client, project: str):
        self.client = client
        self.files: list[DistFile] = []
        self.problems: list[str] = []
        for index in client.settings.indexes:
            page = index.rstrip("/") + f"/{project}/"
            self._collect(page, self._project_page)
        for location in client.settings.find_links:
            self._collect(location, self._find_links)

    def _collect(self, url: str, read) -> None:
        try:
            self.files += read(url)
        except _Unreachable as exc:
            self.problems.append(f"{redact(url)}: {exc}")

    def _project_page(self, url: str) -> list[DistFile]:
        local = _local_path(url)
        if local is not None:  # pip reads a folder's index.html
            try:
                text = Path(local, "index.html").read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                return []
            except OSError as exc:
                raise _Unreachable(exc.strerror or str(exc)) from None
            return _html_files(text, Path(local, "index.html").as_uri())
        response = self.client.open(url, _ACCEPT)
        if response is None:
            return []
        with response:
            data = _read(response, _MAX_PAGE)
            kind = response.headers.get_content_type()
            final = response.geturl()
            charset = response.headers.get_content_charset() or "utf-8"
        if kind == _JSON_TYPE:
            return _json_files(data, final)
        return _html_files(data.decode(charset, errors="replace"), final)

    def _find_links(self, url: str) -> list[DistFile]:
        local = _local_path(url)
        if local is not None:
            if os.path.isdir(local):
                try:
                    names = sorted(os.listdir(local))
                except OSError as exc:
                    raise _Unreachable(exc.strerror or str(exc)) from None
                return [DistFile(n, Path(local, n).as_uri()) for n in names]
            if not os.path.isfile(local):
                return []
            text = Path(local).read_text(encoding="utf-8", errors="replace")
            return _html_files(text, Path(local).as_uri())
        if "://" not in url:
            return []  # a relative path: not read (see _local_path)
        response = self.client.open(url, "text/html")
        if response is None:
            return []
        with response:
            data = _read(response, _MAX_PAGE)
            final = response.geturl()
        return _html_files(data.decode("utf-8", errors="replace"), final)


def download(client: Client, file: DistFile, dest: Path, limit: int = 4 << 30) -> tuple[Path, str]:
    """`file` saved in folder `dest`, its content checked against the strongest hash the
    index gave (a remote file with no hash is refused: nothing would vouch for it), and
    its sha256."""
    algorithm = next((a for a in _HASHES if a in file.hashes), None)
    local = file.url.startswith("file:")
    if algorithm is None and not local:
        raise DriftauditError(
            f"the package index gives no sha256 for {file.filename}: not downloaded unchecked"
        )
    target = dest / os.path.basename(file.filename)
    digest = hashlib.new(algorithm or "sha256")
    sha256 = digest if digest.name == "sha256" else hashlib.sha256()
    size = 0
    try:
        response = client.open(file.url)
    except _Unreachable as exc:
        raise DriftauditError(f"cannot download {file.filename}: {exc}") from None
    if response is None:
        raise DriftauditError(f"cannot download {file.filename}: not found ({redact(file.url)})")
    import http.client

    with response, open(target, "wb") as out:
        while True:
            try:
                chunk = response.read(_CHUNK)
            except (OSError, http.client.HTTPException) as exc:
                raise DriftauditError(f"download of {file.filename} broke off: {exc}") from None
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise DriftauditError(f"{file.filename} is larger than {limit >> 20} MB")
            digest.update(chunk)
            if sha256 is not digest:
                sha256.update(chunk)
            out.write(chunk)
    if algorithm is not None and digest.hexdigest() != file.hashes[algorithm]:
        target.unlink()
        raise DriftauditError(
            f"{file.filename} does not match the index's {algorithm} "
            f"({digest.hexdigest()[:16]}... != {file.hashes[algorithm][:16]}...): not used"
        )
    return target, sha256.hexdigest()
