"""`_dropped.unread_gradients` across modules: a module's name bound to
gradients is read where an expression reads it in another module that
imports it, and so by a getter of a built name or `vars` on the module
in a module importing it (one file's cases: test_scan_unread_gradients).
"""

import textwrap

import pytest

import scanned
from test_scan_unread_gradients import _tf1


@pytest.mark.parametrize("use", [
    "from model import W1_grad, W1, optimizer\n"
    "step = optimizer.apply_gradients([(W1_grad, W1)])\n",
    "import model\n"
    "step = model.optimizer.apply_gradients([(model.W1_grad, model.W1)])\n",
    "import model\nkey = 'W1_' + 'grad'\n"
    "step = model.optimizer.apply_gradients("
    "[(getattr(model, key), model.W1)])\n",
    "import model\nstep = model.optimizer.apply_gradients("
    "[(vars(model)['W1_' + 'grad'], model.W1)])\n",
], ids=["from-import", "module-attribute", "getattr-built-name",
        "module-vars"])
def test_a_modules_gradients_another_module_applies_are_found(use):
  model = textwrap.dedent(_tf1(""))
  found = scanned.in_project({"model.py": model, "train.py": use})
  assert ("var-list-filter", "model.py", 8) in found, found


def test_a_modules_gradients_no_module_reads_leave_nothing_out():
  model = textwrap.dedent(_tf1(""))
  found = scanned.in_project({
      "model.py": model,
      "train.py": "from model import train\nprint('W1_grad: none')\n"})
  assert [f for f in found if f[0] == "var-list-filter"] == [], found


def test_a_getter_in_a_module_not_importing_it_leaves_nothing_out():
  model = textwrap.dedent(_tf1(""))
  found = scanned.in_project({
      "model.py": model,
      "config.py": "def value(args, key):\n  return getattr(args, key)\n"})
  assert [f for f in found if f[0] == "var-list-filter"] == [], found
