"""A package index on the loopback interface, serving small fake sglang wheels through
the simple API: PEP 691 JSON, PEP 503 HTML, or whichever the client's Accept header asks
for. It records every request, so a test can count downloads; asked as a proxy (an
absolute URL), it answers for any host."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def build_wheel(
    folder: Path,
    version: str,
    files: dict[str, str] | None = None,
    tag: str = "py3-none-any",
    metadata_version: str | None = None,
) -> Path:
    """A wheel of sglang `version` holding `files` (default: a package of six modules),
    its METADATA naming `metadata_version` (default: `version`), and a file outside the
    package that must not be unpacked."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"sglang-{version}-{tag}.whl"
    if files is None:
        files = {"sglang/__init__.py": ""}
        files.update({f"sglang/m{i}.py": f"def f{i}(a): ...\n" for i in range(6)})
    info = f"sglang-{version}.dist-info"
    files = {
        **files,
        "tools/not_sglang.py": "",
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: sglang\nVersion: {metadata_version or version}\n"
        ),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n",
    }
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))
    return wheel


class FakeIndex:
    """`url` is the simple API's root (`.../simple`); `mode` is "json", "html" or
    "negotiate" (JSON when the client accepts it)."""

    def __init__(self, folder: Path, mode: str = "negotiate"):
        self.folder = folder
        self.mode = mode
        self.wheels: dict[str, Path] = {}  # filename -> path
        self.hashes: dict[str, str | None] = {}  # filename -> the sha256 the page gives
        self.yanked: set[str] = set()
        self.requests: list[str] = []  # paths
        self.raw: list[str] = []  # as asked (an absolute URL from a client using a proxy)
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                index.raw.append(self.path)
                path = urllib.parse.urlsplit(self.path).path
                index.requests.append(path)
                if path.rstrip("/") == "/simple/sglang":
                    body, kind = index.page(self.headers.get("Accept", ""))
                elif path.startswith("/files/") and path[7:] in index.wheels:
                    body, kind = index.wheels[path[7:]].read_bytes(), "application/zip"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def add(self, version: str, **kwargs) -> Path:
        wheel = build_wheel(self.folder, version, **kwargs)
        self.wheels[wheel.name] = wheel
        self.hashes[wheel.name] = hashlib.sha256(wheel.read_bytes()).hexdigest()
        return wheel

    def downloads(self) -> list[str]:
        return [r[7:] for r in self.requests if r.startswith("/files/")]

    def page(self, accept: str) -> tuple[bytes, str]:
        as_json = self.mode == "json" or (self.mode == "negotiate" and JSON_TYPE in accept)
        if as_json:
            files = [
                {
                    "filename": name,
                    "url": f"../../files/{name}",
                    "hashes": {"sha256": digest} if digest else {},
                    **({"yanked": "broken"} if name in self.yanked else {}),
                }
                for name, digest in self.hashes.items()
            ]
            page = {"meta": {"api-version": "1.1"}, "name": "sglang", "files": files}
            return json.dumps(page).encode(), JSON_TYPE
        links = []
        for name, digest in self.hashes.items():
            fragment = f"#sha256={digest}" if digest else ""
            yanked = " data-yanked" if name in self.yanked else ""
            links.append(f'<a href="../../files/{name}{fragment}"{yanked}>{name}</a>')
        html = "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        return html.encode(), "text/html"

    def write_file_index(self, root: Path) -> str:
        """The same listing as a PEP 503 folder (`root/sglang/index.html`, the wheels
        beside it); its file:// URL."""
        project = root / "sglang"
        project.mkdir(parents=True, exist_ok=True)
        links = []
        for name, path in self.wheels.items():
            (project / name).write_bytes(path.read_bytes())
            digest = self.hashes[name]
            fragment = f"#sha256={digest}" if digest else ""
            links.append(f'<a href="{name}{fragment}">{name}</a>')
        (project / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
        return root.as_uri()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
