"""Build configuration that pyproject.toml cannot express: the rule packs live in the
repository's top-level `rules/` and ship inside the package as `driftaudit.builtin_packs`
(read with importlib.resources); the JSON Schemas of the reports ship as package data of
`driftaudit.report.schemas`. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["driftaudit", "driftaudit.*"]), "driftaudit.builtin_packs"],
    package_dir={"driftaudit.builtin_packs": "rules"},
    package_data={
        "driftaudit.builtin_packs": ["*.toml"],
        "driftaudit.report.schemas": ["*.schema.json"],
    },
)
