"""The built-in rule packs (`*.toml`), installed as the package `driftaudit.builtin_packs`."""
