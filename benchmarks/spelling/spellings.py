"""The ways a consumer spells a reach of a changed API: one template per (group, spelling).

A template is Python source with `# BREAK` on the line the new release breaks; `{M}` is
the module, `{N}` the name (a function, class or module-level name), `{C}`/`{m}` a class
and its member, `{ARGS}` a call valid against the old signature, `{KW}` the same as a
dict literal, `{PKG}` the consumer package (for a re-export through one of its modules).
`{PARAMS}` is the old method's parameter list (an override or stand-in mirroring it).
A template may hold a second file (`---- compat.py ----`): the re-export.

NEAR holds near misses per group: code close to a spelling that does not break on the new
release (no `# BREAK`); a finding there that names the change is a false one."""

from __future__ import annotations

# spellings a string carries (a runtime lookup): the table marks each one no checker found
STRING_SPELLINGS = {"importlib", "mock_patch", "mock_patch_object", "getattr"}

NAME = {  # a module-level name removed or moved
    "direct": "from {M} import {N}  # BREAK\n",
    "alias": "from {M} import {N} as _alias  # BREAK\n",
    "module_attr": "import {M} as _mod\n\nvalue = _mod.{N}  # BREAK\n",
    "star": "from {M} import *  # noqa: F403\n\nvalue = {N}  # BREAK\n",
    "lazy": "def run():\n    from {M} import {N}  # BREAK\n\n    return {N}\n",
    "type_checking": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from {M} import {N}  # BREAK\n"
    ),
    "try_except": ("try:\n    from {M} import {N}  # BREAK\nexcept ImportError:\n    {N} = None\n"),
    "importlib": 'import importlib\n\nvalue = importlib.import_module("{M}").{N}  # BREAK\n',
    "mock_patch": 'from unittest import mock\n\npatcher = mock.patch("{M}.{N}")  # BREAK\n',
    "getattr": 'import {M} as _mod\n\nvalue = getattr(_mod, "{N}")  # BREAK\n',
    "reexport": (
        "from {PKG}.compat_{ID} import {N}\n\nvalue = {N}\n"
        "---- compat_{ID}.py ----\nfrom {M} import {N}  # BREAK\n"
    ),
    "reexport_star": (  # the consumer module re-exports by a star import: the import fails
        "from {PKG}.compat_{ID} import {N}  # BREAK\n\nvalue = {N}\n"
        "---- compat_{ID}.py ----\nfrom {M} import *  # noqa: F403\n"
    ),
}

MEMBER = {  # a class member removed
    "class_attr": "from {M} import {C}\n\nvalue = {C}.{m}  # BREAK\n",
    "annotated_param": "from {M} import {C}\n\n\ndef run(obj: {C}):\n    return obj.{m}  # BREAK\n",
    "annotated_attr": (
        "from {M} import {C}\n\n\nclass Holder:\n    def __init__(self, obj: {C}):\n"
        "        self.obj: {C} = obj\n\n    def run(self):\n        return self.obj.{m}  # BREAK\n"
    ),
    "factory": (
        "from {M} import {C}\n\n\ndef make() -> {C}:\n    raise NotImplementedError\n\n\n"
        "value = make().{m}  # BREAK\n"
    ),
    "container": (
        "from {M} import {C}\n\n\ndef run(objs: list[{C}]):\n    for obj in objs:\n"
        "        print(obj.{m})  # BREAK\n"
    ),
    "container_index": (
        "from {M} import {C}\n\n\ndef run(objs: dict[str, {C}]):\n"
        '    return objs["a"].{m}  # BREAK\n'
    ),
    "inherited": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    pass\n\n\ndef run(obj: Sub):\n"
        "    return obj.{m}  # BREAK\n"
    ),
    "self_inherited": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def run(self):\n"
        "        return self.{m}  # BREAK\n"
    ),
    "super": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def run(self):\n"
        "        return super().{m}  # BREAK\n"
    ),
    "getattr": (
        'from {M} import {C}\n\n\ndef run(obj: {C}):\n    return getattr(obj, "{m}")  # BREAK\n'
    ),
    "mock_patch_object": (
        "from unittest import mock\n\nfrom {M} import {C}\n\n"
        'patcher = mock.patch.object({C}, "{m}")  # BREAK\n'
    ),
    "mock_patch": 'from unittest import mock\n\npatcher = mock.patch("{M}.{C}.{m}")  # BREAK\n',
}

FUNCTION = {  # a module-level function whose parameters changed
    "direct": "from {M} import {N}\n\n{N}({ARGS})  # BREAK\n",
    "importlib": 'import importlib\n\nimportlib.import_module("{M}").{N}({ARGS})  # BREAK\n',
    "alias": "from {M} import {N} as _alias\n\n_alias({ARGS})  # BREAK\n",
    "module_attr": "import {M} as _mod\n\n_mod.{N}({ARGS})  # BREAK\n",
    "star": "from {M} import *  # noqa: F403\n\n{N}({ARGS})  # BREAK\n",
    "lazy": "def run():\n    from {M} import {N}\n\n    return {N}({ARGS})  # BREAK\n",
    "partial": (
        "import functools\n\nfrom {M} import {N}\n\n"
        "bound = functools.partial({N}, {ARGS})  # BREAK\n"
        "bound()\n"
    ),
    "kwargs_splat": "from {M} import {N}\n\nkwargs = {KW}\n{N}(**kwargs)  # BREAK\n",
    "getattr": 'import {M} as _mod\n\ngetattr(_mod, "{N}")({ARGS})  # BREAK\n',
    "reexport": (
        "from {PKG}.compat_{ID} import {N}\n\n{N}({ARGS})  # BREAK\n"
        "---- compat_{ID}.py ----\nfrom {M} import {N}  # noqa: F401\n"
    ),
    "reexport_star": (
        "from {PKG}.compat_{ID} import {N}\n\n{N}({ARGS})  # BREAK\n"
        "---- compat_{ID}.py ----\nfrom {M} import *  # noqa: F403\n"
    ),
}

METHOD = {  # a method whose parameters changed
    "annotated_param": (
        "from {M} import {C}\n\n\ndef run(obj: {C}):\n    return obj.{m}({ARGS})  # BREAK\n"
    ),
    "annotated_attr": (
        "from {M} import {C}\n\n\nclass Holder:\n    def __init__(self, obj: {C}):\n"
        "        self.obj: {C} = obj\n\n    def run(self):\n"
        "        return self.obj.{m}({ARGS})  # BREAK\n"
    ),
    "factory": (
        "from {M} import {C}\n\n\ndef make() -> {C}:\n    raise NotImplementedError\n\n\n"
        "make().{m}({ARGS})  # BREAK\n"
    ),
    "container": (
        "from {M} import {C}\n\n\ndef run(objs: list[{C}]):\n    for obj in objs:\n"
        "        obj.{m}({ARGS})  # BREAK\n"
    ),
    "inherited": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    pass\n\n\ndef run(obj: Sub):\n"
        "    return obj.{m}({ARGS})  # BREAK\n"
    ),
    "self_inherited": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def run(self):\n"
        "        return self.{m}({ARGS})  # BREAK\n"
    ),
    "super": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def {m}(self, *args, **kwargs):\n"
        "        return super().{m}({ARGS})  # BREAK\n"
    ),
    "partial": (
        "import functools\n\nfrom {M} import {C}\n\n\ndef run(obj: {C}):\n"
        "    bound = functools.partial(obj.{m}, {ARGS})  # BREAK\n    return bound()\n"
    ),
    "kwargs_splat": (
        "from {M} import {C}\n\n\ndef run(obj: {C}):\n    kwargs = {KW}\n"
        "    return obj.{m}(**kwargs)  # BREAK\n"
    ),
    "getattr": (
        "from {M} import {C}\n\n\ndef run(obj: {C}):\n"
        '    return getattr(obj, "{m}")({ARGS})  # BREAK\n'
    ),
    # sglang calls the method with its new parameters: a mirror of the old ones breaks
    "override": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def {m}(self, {PARAMS}):  # BREAK\n"
        "        return None\n"
    ),
    "stand_in": (  # not a subclass: a wrapper handed to sglang in place of the class
        "from {M} import {C}\n\n\nclass StandIn:\n    def __init__(self, inner: {C}):\n"
        "        self.inner = inner\n\n    def {m}(self, {PARAMS}):  # BREAK\n"
        "        return None\n\n\ndef install(holder, inner: {C}):\n"
        "    holder.component = StandIn(inner)\n"
    ),
}

# spellings that break only for some kinds: an override or stand-in mirroring the old
# parameters breaks when sglang passes a new or renamed one, or stops passing a required one
OVERRIDES = {"override", "stand_in"}

CONSTRUCTOR = {  # a class's __init__ whose parameters changed
    "direct": "from {M} import {C}\n\n{C}({ARGS})  # BREAK\n",
    "star": "from {M} import *  # noqa: F403\n\n{C}({ARGS})  # BREAK\n",
    "getattr": 'import {M} as _mod\n\ngetattr(_mod, "{C}")({ARGS})  # BREAK\n',
    "importlib": 'import importlib\n\nimportlib.import_module("{M}").{C}({ARGS})  # BREAK\n',
    "alias": "from {M} import {C} as _alias\n\n_alias({ARGS})  # BREAK\n",
    "module_attr": "import {M} as _mod\n\n_mod.{C}({ARGS})  # BREAK\n",
    "lazy": "def run():\n    from {M} import {C}\n\n    return {C}({ARGS})  # BREAK\n",
    "partial": (
        "import functools\n\nfrom {M} import {C}\n\n"
        "make = functools.partial({C}, {ARGS})  # BREAK\n"
        "make()\n"
    ),
    "kwargs_splat": "from {M} import {C}\n\nkwargs = {KW}\n{C}(**kwargs)  # BREAK\n",
    "super": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    def __init__(self):\n"
        "        super().__init__({ARGS})  # BREAK\n"
    ),
    "subclass_call": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    pass\n\n\nSub({ARGS})  # BREAK\n"
    ),
    "reexport": (
        "from {PKG}.compat_{ID} import {C}\n\n{C}({ARGS})  # BREAK\n"
        "---- compat_{ID}.py ----\nfrom {M} import {C}  # noqa: F401\n"
    ),
    "reexport_star": (
        "from {PKG}.compat_{ID} import {C}\n\n{C}({ARGS})  # BREAK\n"
        "---- compat_{ID}.py ----\nfrom {M} import *  # noqa: F403\n"
    ),
}

DATACLASS = {  # a dataclass whose fields changed: its generated __init__
    "dataclass": "from {M} import {C}\n\n{C}({ARGS})  # BREAK\n",
    "alias": "from {M} import {C} as _alias\n\n_alias({ARGS})  # BREAK\n",
    "module_attr": "import {M} as _mod\n\n_mod.{C}({ARGS})  # BREAK\n",
    "star": "from {M} import *  # noqa: F403\n\n{C}({ARGS})  # BREAK\n",
    "lazy": "def run():\n    from {M} import {C}\n\n    return {C}({ARGS})  # BREAK\n",
    "partial": (
        "import functools\n\nfrom {M} import {C}\n\n"
        "make = functools.partial({C}, {ARGS})  # BREAK\n"
        "make()\n"
    ),
    "kwargs_splat": "from {M} import {C}\n\nkwargs = {KW}\n{C}(**kwargs)  # BREAK\n",
    "getattr": 'import {M} as _mod\n\ngetattr(_mod, "{C}")({ARGS})  # BREAK\n',
    "subclass_call": (
        "from {M} import {C}\n\n\nclass Sub({C}):\n    pass\n\n\nSub({ARGS})  # BREAK\n"
    ),
}

# a member newly read on a parameter (mine.READ_KIND), reached by a stand-in the consumer
# builds by hand and hands to the callee: `{CALLEE}` is the function, the class (its
# constructor) or `Class.method` (the stand-in is `self`); `{SARGS}` the call's arguments
# with the stand-in at the parameter, as STAND_IN_EXPR spells it for the template;
# `{ATTRS}` the old release's reads as keywords, `{SETS}`/`{SELF_SETS}` as assignments
STAND_IN = {
    "namespace_arg": (
        "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n"
        "{CALLEE}({SARGS})  # BREAK\n"
    ),
    "namespace_name": (
        "import types\n\nfrom {M} import {IMPORT}\n\n\ndef run():\n"
        "    stand_in = types.SimpleNamespace()\n{SETS}"
        "    return {CALLEE}({SARGS})  # BREAK\n"
    ),
    "fake_arg": (
        "from {M} import {IMPORT}\n\n\nclass Fake:\n    def __init__(self):\n{SELF_SETS}"
        "\n\n{CALLEE}({SARGS})  # BREAK\n"
    ),
    "factory_namespace": (  # built and returned by a consumer function, then handed over
        "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n\n"
        "def make_stand_in():\n    return SimpleNamespace({ATTRS})\n\n\n"
        "{CALLEE}({SARGS})  # BREAK\n"
    ),
}
# a stand-in handed to a method called on a receiver typed by an annotation (the
# `method_arg` targets: a method's parameter other than `self`; they take this one alone)
METHOD_ARG = {
    "method_arg": (
        "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n\n"
        "def run(obj: {IMPORT}):\n    return obj.{m}({SARGS})  # BREAK\n"
    ),
}
# a stand-in installed in an attribute of an sglang object built without `__init__`, that
# the method then called on it reads (`{H}`: the attribute)
INSTALLED = {
    "installed_fake": (
        "from {M} import {IMPORT}\n\n\nclass Fake:\n    def __init__(self):\n{SELF_SETS}"
        "\n\ndef run():\n    obj = object.__new__({IMPORT})\n"
        "    obj.{H} = Fake()  # BREAK\n    return obj.{m}({OTHERS})\n"
    ),
    "installed_namespace": (
        "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n\ndef run():\n"
        "    obj = {IMPORT}.__new__({IMPORT})\n"
        "    obj.{H} = SimpleNamespace({ATTRS})  # BREAK\n    return obj.{m}({OTHERS})\n"
    ),
    "nested_namespace": (  # the object itself a namespace, the stand-in in one of its keywords
        "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n"
        "held = SimpleNamespace({ATTRS})\n"
        "{IMPORT}.{m}(SimpleNamespace({H}=held), {OTHERS})  # BREAK\n"
    ),
}
STAND_IN_EXPR = {
    "namespace_arg": "SimpleNamespace({ATTRS})",
    "namespace_name": "stand_in",
    "fake_arg": "Fake()",
    "factory_namespace": "make_stand_in()",
    "method_arg": "SimpleNamespace({ATTRS})",
    "near_method_sets_member": "SimpleNamespace({ATTRS_ALL})",
    "near_method_mock": "MagicMock()",
    "near_sets_member": "SimpleNamespace({ATTRS_ALL})",
    "near_mock": "MagicMock()",
}

_CALL_NEAR = {  # the same reaches, not breaking: arguments the consumer supplies itself
    "near_star_shadowed": "from {M} import *  # noqa: F403\n\n\ndef {N}(**kwargs):\n"
    "    return kwargs\n\n\n{N}({ARGS})\n",
    "near_kwargs_mutated": (
        "from {M} import {N}\n\n\ndef run(options):\n    kwargs = {KW}\n"
        "    kwargs.update(options)\n    return {N}(**kwargs)\n"
    ),
    "near_partial_other": (
        "import functools\n\nfrom {M} import {N}\n\nbound = functools.partial(print, {ARGS})\n"
        "value = {N}\n"
    ),
    "near_getattr_default": ('import {M} as _mod\n\nvalue = getattr(_mod, "{N}", None)\n'),
}

NEAR = {
    "stand_in": {
        "near_sets_member": (  # the stand-in sets the new members too
            "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n{CALLEE}({SARGS})\n"
        ),
        "near_mock": (  # a mock without a spec answers every read
            "from unittest.mock import MagicMock\n\nfrom {M} import {IMPORT}\n\n{CALLEE}({SARGS})\n"
        ),
    },
    "method_arg": {  # the same on a typed receiver
        "near_method_sets_member": (
            "from types import SimpleNamespace\n\nfrom {M} import {IMPORT}\n\n\n"
            "def run(obj: {IMPORT}):\n    return obj.{m}({SARGS})\n"
        ),
        "near_method_mock": (
            "from unittest.mock import MagicMock\n\nfrom {M} import {IMPORT}\n\n\n"
            "def run(obj: {IMPORT}):\n    return obj.{m}({SARGS})\n"
        ),
    },
    "name": {
        "near_star_shadowed": "from {M} import *  # noqa: F403\n\n{N} = None\nvalue = {N}\n",
        "near_importlib_default": (
            'import importlib\n\nvalue = getattr(importlib.import_module("{M}"), "{N}", None)\n'
        ),
        "near_star_builtin": "from {M} import *  # noqa: F403\n\nvalue = len([])\n",
        "near_reexport_star_own": (
            "from {PKG}.near_{ID}_own import {N}\n\nvalue = {N}\n"
            "---- near_{ID}_own.py ----\nfrom {M} import *  # noqa: F403\n\n{N} = None\n"
        ),
    },
    "member": {
        "near_getattr_other": (
            'from {M} import {C}\n\n\ndef run(obj: {C}):\n    return getattr(obj, "{m}_x", None)\n'
        ),
    },
    "function": _CALL_NEAR,
    "constructor": _CALL_NEAR,
    "dataclass": _CALL_NEAR,
    "method": {
        "near_kwargs_mutated": (
            "from {M} import {C}\n\n\ndef run(obj: {C}, options):\n    kwargs = {KW}\n"
            "    kwargs.update(options)\n    return obj.{m}(**kwargs)\n"
        ),
        "near_override_variadic": (
            "from {M} import {C}\n\n\nclass Sub({C}):\n    def {m}(self, *args, **kwargs):\n"
            "        return None\n"
        ),
    },
}
