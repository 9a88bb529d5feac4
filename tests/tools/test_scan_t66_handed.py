"""A module, or an object, handed on as a value to a getter elsewhere
(`pick(model, 'W1_' + 'grad')` with `def pick(obj, key): return
getattr(obj, key)` in another module) is not followed: a rule must
follow the object through the project's resolved calls (imports, names
re-exported, attribute chains, callbacks) into the getter's parameter,
and a rule of the import graph alone (t66's `_handed`, taken back) also
found unrelated getters of a config, `importlib.reload(model)` and
`print(model)`. The misses are strict xfails naming what a rule must
resolve; the look-alikes stay silent, as on base48."""

import textwrap

import pytest

import scanned
from test_scan_fetched_gradients import _TF1 as FETCHED_TF1
from test_scan_unread_gradients import _tf1

_MODEL = textwrap.dedent(_tf1(""))
_PICK = "def pick(obj, key):\n  return getattr(obj, key)\n"
_APPLY = ("step = model.optimizer.apply_gradients("
          "[({read}, model.W1)])\n")

_FOLLOW = ("the module reaches the getter's parameter only through "
           "{}: a rule must follow the object there")

# The gradients are read through a getter handed the module.
HANDED = {
    "getattr on a parameter of a module not importing it": ({
        "util.py": _PICK,
        "train.py": "import model\nfrom util import pick\n" + _APPLY.format(
            read="pick(model, 'W1_' + 'grad')")}, "a call into util"),
    "vars on a parameter of a module not importing it": ({
        "util.py": "def table(obj):\n  return vars(obj)\n",
        "train.py": "import model\nimport util\n"
                    "grads = util.table(model)['W1_' + 'grad']\n"
                    + _APPLY.format(read="grads")}, "a call into util"),
    "getattr on a parameter in the importer itself": ({
        "train.py": "import model\n\n" + _PICK + "\n" + _APPLY.format(
            read="pick(model, 'W1_' + 'grad')")}, "a local call"),
    "the module kept in a list a getter elsewhere reads": ({
        "util.py": "def pick(objs, key):\n  return getattr(objs[0], key)\n",
        "train.py": "from pkg import model\nimport util\nparts = [model]\n"
                    + _APPLY.format(read="util.pick(parts, 'W1_' + 'grad')")
    }, "a list's element"),
    # The read's C1, C2, C4.
    "C1 the module re-exported by a plain module": ({
        "common.py": "import model\n", "util.py": _PICK,
        "train.py": "from common import model\nfrom util import pick\n"
                    + _APPLY.format(read="pick(model, 'W1_' + 'grad')")},
                    "a name another module re-exports"),
    "C2 the module reached as common.model": ({
        "common.py": "import model\n", "util.py": _PICK,
        "train.py": "import common\nfrom util import pick\nmodel = None\n"
                    "step = common.model.optimizer.apply_gradients([("
                    "pick(common.model, 'W1_' + 'grad'), "
                    "common.model.W1)])\n"}, "an attribute chain"),
    "C4 the getter handed as a callback": ({
        "util.py": _PICK,
        "train.py": "import model\ndef run(read):\n  return "
                    "model.optimizer.apply_gradients("
                    "[(read(model, 'W1_' + 'grad'), model.W1)])\n",
        "main.py": "import train, util\nstep = train.run(util.pick)\n"},
                    "a callback's parameter"),
}

# Nothing reads the gradients: a getter or `vars` on a config, the
# module only printed or reloaded (the read's D1-D4).
SILENT = {
    "D1 importlib.reload(model), pick(args, k) elsewhere": {
        "util.py": _PICK,
        "train.py": "import importlib\nimport model\nfrom util import pick\n"
                    "import argparse\nargs = argparse.Namespace(lr=1)\n"
                    "importlib.reload(model)\nprint(pick(args, 'l' + 'r'))\n"},
    "D2 print(model), vars of a config in a helper": {
        "util.py": "def table(cfg):\n  return dict(vars(cfg))\n",
        "train.py": "import model\nimport util\nprint(model)\n"
                    "class Cfg: lr = 1\nprint(util.table(Cfg))\n"},
    "D3 one module prints model, another reads a config": {
        "util.py": _PICK, "a.py": "import model\nprint(model)\n",
        "b.py": "import model\nimport util\nclass Cfg: lr = 1\n"
                "print(util.pick(Cfg, 'l' + 'r'), model.W1)\n"},
    "D4 a getter on a module global, the module printed": {
        "util.py": "class _A: lr = 1\nargs = _A()\n"
                   "LR = getattr(args, 'l' + 'r')\n",
        "train.py": "import model\nimport util\nprint(model, util.LR)\n"},
}


def _project(files):
  tree = {"model.py": _MODEL, **files}
  if any("from pkg import" in t for t in files.values()):
    tree = {"pkg/__init__.py": "", "pkg/model.py": _MODEL, **files}
  return [f for f in scanned.in_project(tree) if f[0] == "var-list-filter"]


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(
        strict=True, reason=_FOLLOW.format(HANDED[n][1])))
    for n in sorted(HANDED)])
def test_a_module_handed_to_a_getter_keeps_its_gradients(name):
  found = _project(HANDED[name][0])
  assert [f[2] for f in found] == [8], found


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_getter_on_something_else_leaves_the_gradients_out(name):
  assert _project(SILENT[name]) == []


# Gradients kept on an object only a session fetches (`_fetched_out`).
_FETCHED_MODEL = textwrap.dedent(
    FETCHED_TF1.replace("        {use}\n", "").format())
_GO = ("def go(sess, x, y, feed):\n  m = model.MLP(x, y)\n"
       "  return model.fisher(sess, m, feed){extra}\n")


def _fetched(files):
  found = scanned.in_project({"model.py": _FETCHED_MODEL, **files})
  return [f for f in found if f[0] == "var-list-filter"]


FETCHED_HANDED = {
    "the object handed to a getter elsewhere": ({
        "util.py": _PICK,
        "train.py": "import model\nimport util\n\ndef step(x, y, which):\n"
                    "  pairs = util.pick(model.MLP(x, y), which + 's')\n"
                    "  return model.tf.train.AdamOptimizer(0.1)"
                    ".apply_gradients(pairs)\n"}, "a call into util"),
    "E3 the getter handed as a callback": ({
        "util.py": _PICK,
        "train.py": "import model\ndef step(read, x, y, which):\n"
                    "  pairs = read(model.MLP(x, y), which + 's')\n"
                    "  return model.tf.train.AdamOptimizer(0.1)"
                    ".apply_gradients(pairs)\n",
        "main.py": "import train, util\n"
                   "op = train.step(util.pick, 1, 2, 'grad')\n"},
                    "a callback's parameter"),
}

FETCHED_SILENT = {
    "E1 a getter of a helper given only a config class": {
        "util.py": "def opt(cfg, key):\n  return getattr(cfg, key)\n",
        "train.py": "import model\nimport util\nclass F: lr = 0.1\n"
                    "lr = util.opt(F, 'l' + 'r')\n" + _GO.format(extra="")},
    "E4 a getter on a module global": {
        "util.py": "class _A: lr = 1\nargs = _A()\n"
                   "LR = getattr(args, 'l' + 'r')\n",
        "train.py": "import model\nimport util\n"
                    + _GO.format(extra=", util.LR")},
    "a getter no importer of the model calls": {
        "util.py": _PICK,
        "tools.py": "import util\nprint(util.pick(object(), 'a' + 'b'))\n"},
}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(
        strict=True, reason=_FOLLOW.format(FETCHED_HANDED[n][1])))
    for n in sorted(FETCHED_HANDED)])
def test_an_object_handed_to_a_getter_keeps_its_step(name):
  found = _fetched(FETCHED_HANDED[name][0])
  assert [f[1:] for f in found] == [("model.py", 20)], found


@pytest.mark.parametrize("name", sorted(FETCHED_SILENT))
def test_only_fetched_gradients_beside_other_getters_are_silent(name):
  assert _fetched(FETCHED_SILENT[name]) == []
