"""The sglang surfaces a snapshot offers, each with its extractor and JSON codec
(so the snapshot cache can keep them next to the modules)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftaudit.snapshot.surfaces import (
    envs,
    http,
    io_structs,
    parsers,
    requires_dist,
    serverarg_redirects,
    serverarg_resolutions,
)

SURFACES_VERSION = "6"  # bump when an extractor changes: invalidates the cache


@dataclass(frozen=True)
class Surface:
    extract: Callable[[Path], Any]
    dump: Callable[[Any], Any]
    load: Callable[[Any], Any]


# in the order matching first reads them: a cold run's helper process builds them so
# (store/ahead.py)
SURFACES: dict[str, Surface] = {
    "server_arg_redirects": Surface(
        serverarg_redirects.extract_redirects,
        lambda v: [r.to_json() for r in v],
        lambda d: [serverarg_redirects.Redirect.from_json(x) for x in d],
    ),
    "server_arg_resolutions": Surface(
        serverarg_resolutions.extract_resolutions,
        lambda v: v.to_json(),
        serverarg_resolutions.Resolutions.from_json,
    ),
    "meta_info_keys": Surface(io_structs.extract_meta_info_keys, dict, dict),
    "routes": Surface(
        http.extract_routes,
        lambda v: [r.to_json() for r in v],
        lambda d: [http.Route.from_json(x) for x in d],
    ),
    "request_structs": Surface(
        io_structs.extract_request_structs,
        lambda v: {k: s.to_json() for k, s in v.items()},
        lambda d: {k: io_structs.Struct.from_json(s) for k, s in d.items()},
    ),
    "env_vars": Surface(
        envs.extract_env_vars,
        lambda v: {k: e.to_json() for k, e in v.items()},
        lambda d: {k: envs.EnvVar.from_json(e) for k, e in d.items()},
    ),
    "parsers": Surface(parsers.extract_parsers, lambda v: v.to_json(), parsers.Parsers.from_json),
    "requirements": Surface(
        requires_dist.read_requirements,
        lambda v: [r.to_json() for r in v],
        lambda d: [requires_dist.Requirement.from_json(x) for x in d],
    ),
}
