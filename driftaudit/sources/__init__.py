"""Version spec -> sglang source tree.

One syntax everywhere: a release (`0.5.14`, from the package index), `latest`, a
directory, `git:PATH@REF` (a ref of a local clone), or `installed`.
"""

from driftaudit.sources.index import configure as configure_sources
from driftaudit.sources.resolve import resolve_spec
from driftaudit.sources.tree import SourceTree

__all__ = ["SourceTree", "configure_sources", "resolve_spec"]
