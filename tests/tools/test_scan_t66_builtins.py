"""`_unnamed` and `_dropped` tell the builtin `vars`, `eval`, `exec`,
`locals`, `globals` and `getattr` by resolving the called name in the
call's own scope chain (its function's locals and parameters, enclosing
functions, the module, the builtins; a class body does not enclose its
methods; `global` and `nonlocal` honoured), and through `builtins`
(`builtins.eval`, `from builtins import vars as v`): a name bound in
another scope no longer hides the builtin, and a name bound where the
call resolves it still does. The builtin held as a value counts where
it may be called: bound to a name the module calls, or passed as an
argument; not compared or kept in a table. A module handed on as a
value to a getter elsewhere is not followed: `test_scan_t66_handed`."""

import textwrap

import pytest

import scanned
from test_scan_unread_gradients import _tf1

def _text(*lines):
  return _tf1("\n    ".join(lines))


_STEP = "step = optimizer.apply_gradients([({read}, W1)])"

# A dynamic read of `W1_grad` by the builtin, whatever else is bound
# elsewhere: the gradients are applied, the finding stays.
FOUND = {
    "vars, another function's parameter named vars": _text(
        "def helper(vars):", "  return vars",
        _STEP.format(read="vars()['W1_' + 'grad']")),
    "eval, another function's local named eval": _text(
        "def other():", "  eval = len", "  return eval([])",
        _STEP.format(read="eval('W1_' + 'grad')")),
    "eval, a class attribute named eval": _text(
        "class C:", "  eval = None",
        _STEP.format(read="eval('W1_' + 'grad')")),
    "eval in a method, its class binding eval": _text(
        "class C:", "  eval = None",
        "  def read(self):", "    return eval('W1_' + 'grad')",
        _STEP.format(read="C().read()")),
    "locals, a comprehension's name elsewhere": _text(
        "names = [locals for locals in range(3)]",
        _STEP.format(read="locals()['W1_' + 'grad']")),
    "eval, a lambda's parameter elsewhere": _text(
        "first = lambda eval: eval[0]",
        _STEP.format(read="eval('W1_' + 'grad')")),
    "globals, nonlocal in a nested function elsewhere": _text(
        "def outer():", "  globals = 1", "  def inner():",
        "    nonlocal globals", "    globals = 2", "  return inner",
        _STEP.format(read="globals()['W1_' + 'grad']")),
    "builtins.eval": _text(
        "import builtins",
        _STEP.format(read="builtins.eval('W1_' + 'grad')")),
    "builtins under an alias": _text(
        "import builtins as b",
        _STEP.format(read="b.vars()['W1_' + 'grad']")),
    "from builtins import vars as v": _text(
        "from builtins import vars as v",
        _STEP.format(read="v()['W1_' + 'grad']")),
    # The builtin held as a value, then called under another name.
    "eval held under another name": _text(
        "run_text = eval",
        _STEP.format(read="run_text('W1_' + 'grad')")),
    "eval handed to map": _text(
        _STEP.format(read="list(map(eval, ['W1_' + 'grad']))[0]")),
    "eval a default of a parameter the function calls": _text(
        "def read(run=eval):", "  return run('W1_' + 'grad')",
        _STEP.format(read="read()")),
    # A builtin's call whose result is called (the second read: found
    # at base48, lost when every call's function was skipped).
    "eval's result called": _text(
        _STEP.format(read="eval('lambda: W1_' + 'grad')()")),
    # The final read: `:=` in a comprehension binds around it.
    "eval bound by := in a comprehension, called outside": _text(
        "fs = [(run := eval) for _ in (0,)]",
        _STEP.format(read="run('W1_' + 'grad')")),
    "eval in the decorator of a function binding eval": _text(
        "def deco(g):", "  return g",
        "@deco(eval('W1_' + 'grad'))", "def h(eval):", "  return eval",
        _STEP.format(read="h(1)")),
    "__builtins__.eval": _text(
        _STEP.format(read="__builtins__.eval('W1_' + 'grad')")),
    "__builtins__['eval']": _text(
        _STEP.format(read="__builtins__['eval']('W1_' + 'grad')")),
    "getattr(builtins, 'eval')": _text(
        "import builtins",
        _STEP.format(read="getattr(builtins, 'eval')('W1_' + 'grad')")),
    "from builtins import eval": _text(
        "from builtins import eval as run_text",
        _STEP.format(read="run_text('W1_' + 'grad')")),
}

# The called name resolves to something the code bound, not the builtin:
# nothing reads `W1_grad`, nothing leaves W1 out.
SILENT = {
    "a parameter named eval, called": _text(
        "def evaluate(eval):", "  return eval(1)"),
    "an enclosing function's parameter named vars": _text(
        "def outer(vars):", "  def inner():", "    return vars()",
        "  return inner"),
    "a lambda's parameter named eval, called": _text(
        "first = lambda eval: eval(0)"),
    "a comprehension's name eval, called": _text(
        "values = [eval(0) for eval in (abs, len)]"),
    "a module's eval bound by a function's global": _text(
        "def install():", "  global eval", "  eval = print",
        "install()", "eval('W1_' + 'grad')"),
    "a method's own parameter named vars": _text(
        "class C:", "  def read(self, vars):", "    return vars()"),
    "a class body's own eval": _text(
        "class C:", "  eval = print", "  eval('W1_' + 'grad')"),
    "vars from another library": _text(
        "from mylib import vars as v", "print(v())"),
    "a parameter named eval handed on": _text(
        "def evaluate(eval):", "  return list(map(eval, [1]))"),
    # Held as a value where it is never called.
    "eval compared, never called": _text(
        "def safe(fn):", "  assert fn is not eval", "  return fn"),
    "eval kept in a table of banned builtins": _text(
        "BANNED = {'eval': eval, 'exec': exec}", "print(sorted(BANNED))"),
    # The second read: a call of another function's `run` is not a call
    # of the name eval is bound to.
    "eval bound to a name only another function's parameter calls": _text(
        "def f(x):", "  run = eval", "  return run is x",
        "def g(run):", "  return run(1)"),
    "eval bound to a name the module never calls": _text(
        "original = eval", "print(original is eval)"),
    # `:=` in a comprehension binds in the scope around it.
    "a module's eval bound by := in a comprehension": _text(
        "fs = [eval := f for f in (print,)]", "eval('W1_' + 'grad')"),
    "__builtins__ bound by the module": _text(
        "import config as __builtins__",
        "__builtins__.eval('W1_' + 'grad')"),
    "getattr of another module by the name eval": _text(
        "import config", "getattr(config, 'eval')('W1_' + 'grad')"),
    "an attribute named eval of another object": _text(
        "import config", "config.eval('W1_' + 'grad')"),
}


@pytest.mark.parametrize("name, found", [
    *((n, True) for n in sorted(FOUND)),
    *((n, False) for n in sorted(SILENT))])
def test_the_builtin_is_what_the_calls_own_scopes_leave_it(name, found):
  code = (FOUND if found else SILENT)[name]
  assert scanned.in_text(code, "var-list-filter") == (
      [("var-list-filter", 8)] if found else [])


_MODEL = textwrap.dedent(_tf1(""))

# Another module reads the model module's gradients unnamed.
PROJECT_FOUND = {
    "builtins.getattr on the module": {
        "train.py": "import builtins\nimport model\nkey = 'W1_' + 'grad'\n"
                    "step = model.optimizer.apply_gradients("
                    "[(builtins.getattr(model, key), model.W1)])\n"},
    "getattr imported from builtins under another name": {
        "train.py": "from builtins import getattr as read\nimport model\n"
                    "key = 'W1_' + 'grad'\n"
                    "step = model.optimizer.apply_gradients("
                    "[(read(model, key), model.W1)])\n"},
    "builtins.vars on the module": {
        "train.py": "import builtins\nimport model\n"
                    "step = model.optimizer.apply_gradients("
                    "[(builtins.vars(model)['W1_' + 'grad'], model.W1)])\n"},
}

# The final read: a held getattr is read as a getter on objects that
# are not modules (a config's dotted lookup), so a module it is called
# on is not followed.
HELD_ON_MODULE = {
    "getattr held under another name, called on the module": {
        "train.py": "import model\nread = getattr\nkey = 'W1_' + 'grad'\n"
                    "step = model.optimizer.apply_gradients("
                    "[(read(model, key), model.W1)])\n"},
}

# Look-alikes: nothing may read the gradients.
PROJECT_SILENT = {
    "a getter on a parameter, the module never handed on": {
        "util.py": "def pick(obj, key):\n  return getattr(obj, key)\n",
        "train.py": "import model\nfrom util import pick\n"
                    "print(pick(model.optimizer, 'get_' + 'config'))\n"},
    "the module handed on, no dynamic read anywhere": {
        "util.py": "def name(obj):\n  return obj.__name__\n",
        "train.py": "import model\nfrom util import name\n"
                    "print(name(model))\n"},
    "the module handed on, the getter's module called by no importer": {
        "util.py": "def pick(obj, key):\n  return getattr(obj, key)\n",
        "tools.py": "import util\nprint(util.pick(object(), 'a' + 'b'))\n",
        "train.py": "import model\nprint(id(model))\n"},
    # The final read: getattr held by a dotted lookup of a config.
    "reduce(getattr, path, cfg) beside the module": {
        "config.py": "class C:\n  class opt:\n    lr = 0.1\ncfg = C()\n",
        "train.py": "import functools\nimport model\nfrom config import cfg\n"
                    "lr = functools.reduce(getattr, 'opt.lr'.split('.'), cfg)\n"
                    "print(lr, model.W1)\n"},
    "partial(getattr, cfg) beside the module": {
        "config.py": "class C:\n  lr = 0.1\ncfg = C()\n",
        "train.py": "import functools\nimport model\nfrom config import cfg\n"
                    "read = functools.partial(getattr, cfg)\n"
                    "print(read('l' + 'r'), model.W1)\n"},
    "builtins imported, only a literal getattr": {
        "train.py": "import builtins\nimport model\n"
                    "print(builtins.getattr(model, 'loss'))\n"},
}


def _project(files):
  tree = {"model.py": _MODEL, **files}
  if any("from pkg import" in t for t in files.values()):
    tree = {"pkg/__init__.py": "", "pkg/model.py": _MODEL, **files}
  return [f for f in scanned.in_project(tree) if f[0] == "var-list-filter"]


@pytest.mark.parametrize("name, read", [
    *((n, True) for n in sorted(PROJECT_FOUND)),
    *((n, False) for n in sorted(PROJECT_SILENT))])
def test_a_modules_gradients_are_found_where_read_unnamed(name, read):
  found = _project((PROJECT_FOUND if read else PROJECT_SILENT)[name])
  assert [f[2] for f in found] == ([8] if read else []), found


@pytest.mark.xfail(strict=True, reason=(
    "a getattr held as a value is read as a getter on objects that are "
    "not modules: a rule must follow the held value to the object of "
    "the call it reaches"))
@pytest.mark.parametrize("name", sorted(HELD_ON_MODULE))
def test_a_getattr_held_and_called_on_the_module(name):
  found = _project(HELD_ON_MODULE[name])
  assert [f[2] for f in found] == [8], found
