"""The store: every cached or prefetched answer of a run goes through it.

An answer is a declared `Entry`: its key (`keys.key`: namespace, the version of what
the namespace's entries mean, the digests of its inputs, the question), how to compute
it, and the codec of its namespace (`codecs`), which also validates what it reads: an
entry of the wrong shape is a miss, computed again. `Store.get` / `get_many` answer
from the run's memory, else the disk (`db.BlobStore`), else by computing (and storing);
what a child builds ahead (`ahead.Ahead`) is waited for, never decoded twice.
"""

from driftaudit.store.codecs import Codec, Invalid, Json, Pickled, Raw
from driftaudit.store.keys import key
from driftaudit.store.store import Entry, Store, Yield

__all__ = ["Codec", "Entry", "Invalid", "Json", "Pickled", "Raw", "Store", "Yield", "key"]
