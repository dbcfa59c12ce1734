"""HTTP routes: FastAPI/Starlette/aiohttp forms on hand-made trees, then real releases."""

from __future__ import annotations

import pytest

from driftaudit.snapshot.surfaces.http import Route, extract_routes, routes_by_path

from .conftest import write_tree

SERVER = """\
import os
from fastapi import APIRouter, FastAPI
from starlette.routing import Mount, Route as StarletteRoute

app = FastAPI()
router = APIRouter(prefix="/v1/images")
plain_router = APIRouter()
VERTEX_ROUTE = os.environ.get("AIP_PREDICT_ROUTE", "/vertex_generate")
BASE = "/hicache"
_maybe = os.environ.get("SGLANG_OLLAMA_ROOT_ROUTE")


@app.get("/health")
@app.get("/health_generate")
async def health():
    pass


@app.api_route(
    "/generate",
    methods=["POST", "PUT"],
)
async def generate_request(obj):
    pass


@app.api_route("/flush_cache")
async def flush_cache():
    pass


@app.get("/")
@app.head("/")
async def root():
    pass


@app.websocket("/v1/realtime")
async def realtime(ws):
    pass


@router.post("/generations")
async def generations():
    pass


@plain_router.get("/v1/loads")
async def loads():
    pass


@app.post(VERTEX_ROUTE)
async def vertex():
    pass


@app.post(os.environ.get("SGLANG_OLLAMA_CHAT_ROUTE", "/api/chat"))
async def ollama_chat():
    pass


@app.delete(BASE + "/storage-backend")
async def detach():
    pass


@app.get(f"{BASE}/layout")
async def layout():
    pass


@app.get(_maybe)
async def unresolved():
    pass


@app.exception_handler(ValueError)
async def not_a_route(request, exc):
    pass


def add_routes(app):
    app.add_api_route("/v1/score", score, methods=["POST"])
    app.add_api_route("/get_only", score)
    app.routes.append(Mount("/metrics", make_asgi_app()))
    app.routes.append(StarletteRoute("/starlette", endpoint=score, methods=["PUT"]))
"""

BOOTSTRAP = """\
from aiohttp import web


class Bootstrap:
    def _setup_routes(self):
        self.app.router.add_route("*", "/route", self._handle_route)
        self.app.router.add_post("/register_dp_rank", self._handle_register)
        self.app.router.add_get("/health", self._handle_health)
        web.get("/aiohttp_def", self._handle_health)
"""

NOT_ROUTES = """\
import functools
import requests


class Cache:
    @functools.cache
    def get(self, key):
        return key


cache = Cache()


@cache.get("key")
def not_a_path():
    pass


def fetch():
    return requests.get("/health")
"""


def _tree(tmp_path):
    return write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/srt/entrypoints/http_server.py": SERVER,
            "sglang/srt/disaggregation/common/conn.py": BOOTSTRAP,
            "sglang/srt/utils/cache.py": NOT_ROUTES,
            # test code is not part of the server
            "sglang/test/test_utils.py": '@app.get("/only_in_tests")\ndef f():\n    pass\n',
            "sglang/srt/test_server.py": '@app.get("/only_in_tests")\ndef f():\n    pass\n',
            "sglang/srt/broken.py": '@app.get("/broken"\ndef f(:\n',
        },
    )


def _index(routes):
    return {(r.path, tuple(r.methods)): r for r in routes}


def test_decorators_and_calls_are_routes(tmp_path):
    routes = extract_routes(_tree(tmp_path))
    found = _index(routes)
    server = "sglang/srt/entrypoints/http_server.py"
    assert found["/health", ("GET",)].function == "health"
    assert found["/health", ("GET",)].file == server
    assert found["/health_generate", ("GET",)].function == "health"
    generate = found["/generate", ("POST", "PUT")]
    decorator_line = SERVER.splitlines().index("@app.api_route(") + 1
    assert (generate.function, generate.line) == ("generate_request", decorator_line)
    assert ("/flush_cache", ("GET",)) in found  # api_route without methods: FastAPI's GET
    assert found["/", ("GET", "HEAD")].function == "root"  # stacked decorators join
    assert ("/v1/realtime", ("WEBSOCKET",)) in found
    assert found["/v1/images/generations", ("POST",)].function == "generations"  # prefix
    assert ("/v1/loads", ("GET",)) in found
    assert found["/vertex_generate", ("POST",)].function == "vertex"  # constant, env default
    assert ("/api/chat", ("POST",)) in found
    assert ("/hicache/storage-backend", ("DELETE",)) in found
    assert ("/hicache/layout", ("GET",)) in found
    assert found["/v1/score", ("POST",)].function == "score"
    assert ("/get_only", ("GET",)) in found
    assert found["/metrics", ("*",)].function == "make_asgi_app()"
    assert ("/starlette", ("PUT",)) in found


def test_aiohttp_routes(tmp_path):
    found = _index(extract_routes(_tree(tmp_path)))
    conn = "sglang/srt/disaggregation/common/conn.py"
    assert found["/route", ("*",)].file == conn
    assert found["/route", ("*",)].function == "self._handle_route"
    assert found["/register_dp_rank", ("POST",)].line == 7
    in_conn = {(r.path, tuple(r.methods)) for r in extract_routes(tmp_path) if r.file == conn}
    assert ("/health", ("GET",)) in in_conn
    assert ("/aiohttp_def", ("GET",)) in found


def test_what_is_not_a_route(tmp_path):
    routes = extract_routes(_tree(tmp_path))
    paths = {r.path for r in routes}
    assert "key" not in paths and "/only_in_tests" not in paths and "/broken" not in paths
    assert not any(r.function in ("not_a_route", "unresolved", "fetch") for r in routes)
    assert not any(r.file == "sglang/srt/utils/cache.py" for r in routes)
    # unresolvable path (env var without default) is skipped, not guessed
    assert not any(r.function == "unresolved" for r in routes)


def test_routes_are_sorted_and_grouped(tmp_path):
    routes = extract_routes(_tree(tmp_path))
    assert [(r.file, r.line) for r in routes] == sorted((r.file, r.line) for r in routes)
    grouped = routes_by_path(routes)
    assert {r.file for r in grouped["/health"]} == {
        "sglang/srt/entrypoints/http_server.py",
        "sglang/srt/disaggregation/common/conn.py",
    }


def test_json_round_trip(tmp_path):
    routes = extract_routes(_tree(tmp_path))
    assert [Route.from_json(r.to_json()) for r in routes] == routes
    assert routes[0].location == f"{routes[0].file}:{routes[0].line}"


def test_empty_tree(tmp_path):
    assert extract_routes(write_tree(tmp_path, {"sglang/__init__.py": ""})) == []


# ---------------------------------------------------------------- real releases

HTTP_SERVER = "sglang/srt/entrypoints/http_server.py"


def _server_routes(version, release_cache):
    from driftaudit.sources import resolve_spec

    every = extract_routes(resolve_spec(version, release_cache).root)
    return {r.path: r for r in every if r.file == HTTP_SERVER}, every


@pytest.mark.integration
def test_real_0_5_23_routes(release_cache):
    server, every = _server_routes("0.5.23", release_cache)
    assert server["/generate"].methods == ["POST", "PUT"]
    assert server["/generate"].function == "generate_request"
    assert server["/health"].methods == ["GET"]
    assert server["/update_weights_from_tensor"].methods == ["POST"]
    assert server["/v1/chat/completions"].methods == ["POST"]
    assert server["/v1/messages"].methods == ["POST"]  # Anthropic
    assert server["/api/chat"].methods == ["POST"]  # Ollama, path from an env default
    assert server["/v1/realtime"].methods == ["WEBSOCKET"]
    assert server["/"].methods == ["GET", "HEAD"]
    assert len(server) >= 85
    # routers included into the app live in their own modules
    assert any(r.path == "/v1/loads" and r.file.endswith("v1_loads.py") for r in every)
    assert any(r.path == "/scale_elastic_ep" for r in every)
    # the diffusion server's router prefixes
    assert any(r.path == "/v1/images/generations" for r in every)


@pytest.mark.integration
def test_real_route_added_in_0_5_23(release_cache):
    old, _ = _server_routes("0.5.22", release_cache)
    new, _ = _server_routes("0.5.23", release_cache)
    assert set(new) - set(old) == {"/get_hicache_l3_cache_layout"}
    assert set(old) - set(new) == set()  # nothing of the srt server was removed


@pytest.mark.integration
def test_real_routes_removed_and_changed(release_cache):
    v9, _ = _server_routes("0.5.9", release_cache)
    v14, _ = _server_routes("0.5.14", release_cache)
    v22, _ = _server_routes("0.5.22", release_cache)
    assert v9["/weights_checker"].methods == ["POST"]
    assert v14["/weights_checker"].methods == ["GET", "POST"]
    for path in ("/get_load", "/get_weight_version", "/clear_hicache_storage_backend"):
        assert path in v14 and path not in v22


@pytest.mark.integration
def test_real_route_stubs(release_cache):
    """0.5.16 kept `/get_weight_version` only to answer 404 "deprecated ... use
    /model_info"; its live routes are no stubs."""
    server, every = _server_routes("0.5.16", release_cache)
    assert server["/get_weight_version"].stub and server["/weight_version"].stub
    assert sorted(r.path for r in every if r.stub) == ["/get_weight_version", "/weight_version"]
    assert not server["/model_info"].stub
