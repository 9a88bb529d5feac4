"""`tfpartial scan` on modules of many soft updates: the calls that may
copy one list of weights into another (`assign_param(targets,
sources)`) and the lists a module trains are read once per module, not
once per blend written back (each blend walked the whole module and
unparsed its calls), so a module of many target networks costs about
the same per blend however many there are; what it finds is
unchanged."""

import ast

import scanned

from tfpartial._tools.scan import _scopes

_BLEND = "target_param * (1.0 - self.tau) + param * self.tau"


def _soft_updates(n, copied=True):
  """One module: `n` actors, each with a target network copied from it
  first (`copied`) and blended into by one coefficient after each
  step."""
  made = "".join(
      f"    self.actor{i}, self.target{i} = actors[{i}], targets[{i}]\n"
      + (f"    nn.assign_param(self.target{i}.param, self.actor{i}.param)\n"
         if copied else "") for i in range(n))
  updates = "".join(
      f"  def update_param{i}(self):\n"
      f"    for target_param, param in zip(self.target{i}.param,\n"
      f"                                   self.actor{i}.param):\n"
      f"      target_param.assign({_BLEND})\n\n" for i in range(n))
  runs = "".join(f"      self.update_param{i}()\n" for i in range(n))
  return (
      "import tensorflow as tf\nimport nn\n\n\nclass Agents:\n"
      "  def __init__(self, actors, targets, tau):\n" + made
      + "    self.param = [a.param for a in actors]\n"
      "    self.tau = tau\n\n"
      "  def __call__(self, s, q):\n"
      "    return tf.reduce_mean((s - q) ** 2)\n\n"
      "  def train(self, data, optimizer):\n"
      "    for batch in data:\n"
      "      with tf.GradientTape() as tape:\n"
      "        loss = self(*batch)\n"
      "      gradients = tape.gradient(loss, self.param)\n"
      "      optimizer.apply_gradients(zip(gradients, self.param))\n"
      + runs + "\n" + updates)


def _ratio(make, where):
  small, large = (scanned.scan_work(make(n), where) for n in (8, 32))
  return large / max(small, 1), (small, large)


def test_soft_updates_of_copies_stay_silent():
  assert scanned.found(_soft_updates(3)) == []


def test_soft_updates_without_a_copy_stay_found():
  # No copy made first: each written list may be the one trained.
  assert scanned.found(_soft_updates(2, copied=False)) == [
      ("write-back", 27), ("write-back", 32)]


def test_a_modules_copies_are_read_once_per_module():
  # Was quadratic: each blend walked the module for its copy calls and
  # unparsed every call of two arguments (x16 for 4 times the blends at
  # d773085); what is left is one look-up per blend (x4).
  ratio, work = _ratio(_soft_updates, "_target_network.py")
  assert ratio <= 6, work


def _parts_trained_apart(n, prefix="part{i}"):
  """One class: `n` variables, each made under a name of its own, and a
  step per variable training the variables whose name starts with
  `prefix`."""
  makers = "".join(f"    self.w{i} = tf.get_variable('part{i}', (4, 4))\n"
                   for i in range(n))
  steps = "".join(
      f"  def train{i}(self, loss):\n"
      f"    params = [p for p in tf.trainable_variables()\n"
      f"              if p.name.startswith('{prefix.format(i=i)}')]\n"
      f"    return tf.train.AdamOptimizer(1e-3).minimize(loss, "
      f"var_list=params)\n\n" for i in range(n))
  return ("import tensorflow as tf\n\n\nclass Model(object):\n"
          "  def __init__(self):\n" + makers + "\n" + steps)


def test_a_filter_keeping_one_part_of_a_class_stays_found():
  assert scanned.found(_parts_trained_apart(2)) == [
      ("var-list-filter", 10), ("var-list-filter", 15)]


def test_a_filter_keeping_every_part_a_class_makes_stays_silent():
  # Every name the class makes starts with the kept prefix: the class's
  # own parameters, not a part.
  assert scanned.found(_parts_trained_apart(2, prefix="part")) == []


def test_the_names_a_class_makes_are_read_once_per_class():
  # Was quadratic: each filter of a class walked every method of the
  # class and of its bases for the names its makers are given (x16 for
  # 4 times the filters at d773085); what is left is one look-up per
  # filter (x4).
  ratio, work = _ratio(_parts_trained_apart, "_named_makers.py")
  assert ratio <= 6, work


def _printed_gradients(n, shown="print({})"):
  """One script: `n` tapes, each computing the gradient of one variable
  and handing it to `shown`."""
  return "import tensorflow as tf\n\n" + "".join(
      f"x{i} = tf.Variable(-2.)\nz{i} = tf.Variable(-4.)\n"
      f"with tf.GradientTape() as tape:\n  res = (x{i} * z{i}) ** 2\n"
      f"  {shown.format(f'tape.gradient(res, [z{i}])')}\n\n"
      for i in range(n))


def test_gradients_only_printed_stay_silent():
  assert scanned.found(_printed_gradients(3)) == []


def test_the_same_gradients_applied_stay_found():
  # x0 is left out of the step that applies them.
  assert scanned.found(_printed_gradients(1, shown=(
      "grads = {}\ntf.keras.optimizers.SGD(0.1).apply_gradients("
      "zip(grads, [z0]))"))) == [("var-list-filter", 7)]


def test_a_scripts_assignments_are_read_once_per_script():
  # Was quadratic: each gradient call read every assignment of its
  # script for the names taking it (x14 for 4 times the tapes at
  # d773085); what is left is one look-up per call (x4).
  ratio, work = _ratio(_printed_gradients, "_dropped.py")
  assert ratio <= 6, work


def test_a_printed_gradient_builds_no_parent_map():
  # The parent of every node of the module was built to tell a print's
  # argument (at d773085); the arguments of its prints are read from
  # the module's kept walk.
  assert scanned.scan_work(_printed_gradients(8), "_order.py") == 0


def _nested_functions(n):
  """One module: `n` functions, each defined in the one before, each
  with a loop."""
  return "import tensorflow as tf\n\n" + "".join(
      f"{'  ' * i}def f{i}(x{i}, opt):\n"
      f"{'  ' * i}  y{i} = tf.layers.dense(x{i}, 4)\n"
      f"{'  ' * i}  for v in tf.trainable_variables():\n"
      f"{'  ' * i}    opt.minimize(y{i}, var_list=[v])\n" for i in range(n))


def _walks_of_every_scope(n):
  """The work of the kept walks of a module of `n` nested functions and
  of each function and loop in it, the module's first."""
  tree = ast.parse(_nested_functions(n))
  kept = [node for node in ast.walk(tree) if isinstance(
      node, (ast.Module, ast.FunctionDef, ast.For))]
  work, walks = scanned.calls_made(
      lambda: [list(_scopes.walk(node)) for node in kept], "_scopes.py")
  assert [w[1:] for w in walks] == [
      [each for each in ast.walk(node) if not isinstance(each, (
          ast.expr_context, ast.operator))][1:] for node in kept]
  return work


def test_the_walks_inside_a_walked_module_are_kept_on_the_way():
  # Was quadratic: the walk of each function and loop read again the
  # children of every node the walk of the module around it had read
  # (x12 for 4 times the nesting at d773085); each node's children are
  # read once, into the walk of each walked node around it (x4).
  small, large = (_walks_of_every_scope(n) for n in (8, 32))
  assert large / small <= 6, (small, large)


def test_nested_steps_of_single_variables_stay_silent():
  assert scanned.found(_nested_functions(3)) == []

