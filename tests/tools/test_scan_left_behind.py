"""`tfpartial scan` silent on code nothing runs: a class that its
package's `__init__.py` leaves out of the names it imports from its
module one by one, and that no module names (part 30's FedEval keeps an
old attack class beside the one it exports). Its twins keep the
finding: the old class named by a script, a package importing the
module whole (`*`), a module with no package, a class the package
exports."""

import pytest
import scanned


_in_project = scanned.in_project

_ATTACK = """\
    import tensorflow as tf

    class AttackOld:
      def build(self, loss, x, mask):
        opt = tf.train.GradientDescentOptimizer(0.1)
        pairs = opt.compute_gradients(loss, [x])
        pairs = [(g * mask, v) for g, v in pairs]
        return opt.apply_gradients(pairs)

    class Attack:
      def build(self, loss, x):
        opt = tf.train.GradientDescentOptimizer(0.1)
        return opt.minimize(loss, var_list=[x])
    """

_FOUND = [("grads-mask", "pkg/attack.py", 7)]

CASES = {
    # FedEval: the package exports the new class only.
    "an old class its package leaves out": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _ATTACK}, []),
    "the old class run by a script": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _ATTACK,
        "run.py": "from pkg.attack import AttackOld\nAttackOld().build(1, 2, 3)\n"},
        _FOUND),
    "a package importing the module whole": ({
        "pkg/__init__.py": "from .attack import *\n",
        "pkg/attack.py": _ATTACK}, _FOUND),
    "a module in no package": ({"pkg/attack.py": _ATTACK}, _FOUND),
    "the old class exported too": ({
        "pkg/__init__.py": "from .attack import Attack, AttackOld\n",
        "pkg/attack.py": _ATTACK}, _FOUND),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_code_nothing_runs_is_silent_and_its_twins_are_found(name):
  files, expected = CASES[name]
  assert _in_project(files) == expected
