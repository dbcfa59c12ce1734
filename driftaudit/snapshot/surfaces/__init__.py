"""sglang-specific surfaces of a source tree: ServerArgs, HTTP routes, env vars, parsers,
request structs, requirements."""
