"""Where a consumer touches sglang's non-Python surfaces: CLI flags, env vars, HTTP routes.

One module per input kind, each reading the consumer's files from the one index
(`driftaudit.usage.files.ConsumerFiles`): `shell` (`*.sh`, `*.bash`, an sh/bash shebang),
`dockerfile` (`RUN`/`CMD`/`ENTRYPOINT`, `ENV`, `ARG`), `yaml`, `json`, `toml` (what the
three share: `structured`), and Python (`python_files` picks the code worth parsing,
`python_scan` reads it). `scan.scan_surfaces` runs them all; `records` holds the records;
`prefixes` finds the wrapping prefixes (`--sglang-`) in effect.

Flags come back in sglang's spelling (`--sglang-tp-size` -> `--tp-size`); the caller maps
them to ServerArgs fields, so nothing is filtered by a flag list here. Env vars are
`SGLANG_*`/`SGL_*`, kind "set" or "read". URLs are route templates (`/v1/models/{}`)
with the method and payload keys of the call when evident; a plain string starting with
"/" that reaches no call is still reported (method None): the caller keeps the routes
sglang knows.

Not handled: heredocs, flow collections spread over lines in YAML that does not parse
(a template), flags held in variables built in another function or file, request helpers
whose route parameter is not the last part of the path.
"""

from driftaudit.usage.surface_uses.prefixes import detect_prefixes
from driftaudit.usage.surface_uses.records import EnvUsage, FlagUsage, SurfaceUsages, UrlUsage
from driftaudit.usage.surface_uses.scan import scan_surfaces

__all__ = [
    "EnvUsage",
    "FlagUsage",
    "SurfaceUsages",
    "UrlUsage",
    "detect_prefixes",
    "scan_surfaces",
]
