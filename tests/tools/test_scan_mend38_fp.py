"""`tfpartial scan` after the review of part 31's silencers (t50-fp):
each silencer keeps only its narrow shape. A class its package leaves
out is dropped only when nothing may reach it (no decorator, no project
base, no lookup by a string, never a function); a head over a frozen
`.pb` is silent only when its caller calls nothing but the layers the
filter keeps, weightless ops, graph accessors and project helpers that
build nothing, and nothing warm-starts it; a pass-through helper passes
a backbone on; a normalisation helper read as a value or under an alias
is called outside the scope; and the helper-call and `_unexported`
checks cost work in proportion to the project."""

import sys
import textwrap

import pytest

import scanned
import test_scan_var_lists_wholes_left as wholes

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_in_project = scanned.in_project

_MASKED = """\
    class MaskedAttack{base}:
        def build(self, loss, x, mask):
            opt = tf.train.GradientDescentOptimizer(0.1)
            pairs = opt.compute_gradients(loss, [x])
            pairs = [(g * mask, v) for g, v in pairs]
            return opt.apply_gradients(pairs)
"""

_EXPORTED = """\
    class Attack{base}:
      def build(self, loss, x):
        return tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, var_list=[x])
"""


def _attack(head="", base="", between=""):
  return ("    import tensorflow as tf\n" + head + "\n" + between
          + _MASKED.format(base=base) + "\n" + _EXPORTED.format(base=base))


_REGISTERED = _attack(head=(
    "    REGISTRY = {}\n"
    "    def register(key):\n"
    "      def add(cls):\n"
    "        REGISTRY[key] = cls\n"
    "        return cls\n"
    "      return add\n"), between="    @register('masked')\n")

_BASE = """\
    class Base:
      registry = {}
      def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Base.registry[cls.__name__.lower()] = cls
    """

_APP_RUN = """\
    import tensorflow as tf

    def build_model(x):
      return tf.layers.dense(x, 10)

    def main(_):
      x = tf.get_variable("x", [10])
      mask = tf.constant([1.0] * 5 + [0.0] * 5)
      loss = tf.reduce_sum(x * x)
      opt = tf.train.GradientDescentOptimizer(0.1)
      pairs = opt.compute_gradients(loss, [x])
      pairs = [(g * mask, v) for g, v in pairs]
      return opt.apply_gradients(pairs)

    if __name__ == "__main__":
      tf.app.run()
    """

UNEXPORTED = {
    # FedEval: an old class beside the one exported, `(object)` its base.
    "an old class of base object": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _attack(base="(object)")}, []),
    # A script evaluating names of another module: not this one's.
    "a lookup in a module that names it not": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _attack(),
        "run.py": "import other\ncls = eval(other.NAME)\n"}, []),
    "a class registered by its decorator": ({
        "pkg/__init__.py": "from .attack import Attack, REGISTRY\n",
        "pkg/attack.py": _REGISTERED,
        "run.py": "import sys, pkg\npkg.REGISTRY[sys.argv[1]]()\n"},
        [("grads-mask", "pkg/attack.py", 14)]),
    "a class registered by its base's __init_subclass__": ({
        "pkg/__init__.py": "from .base import Base\nfrom .attack import Attack\n",
        "pkg/base.py": _BASE,
        "pkg/attack.py": _attack(head="    from .base import Base\n",
                                 base="(Base)")},
        [("grads-mask", "pkg/attack.py", 8)]),
    "a main run by tf.app.run": ({
        "pkg/__init__.py": "from .train import build_model\n",
        "pkg/train.py": _APP_RUN}, [("grads-mask", "pkg/train.py", 12)]),
    "a class picked by import_module and a config's name": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _attack(),
        "run.py": (
            "import importlib, yaml\n"
            "cfg = yaml.safe_load(open('config.yaml'))\n"
            "cls = getattr(importlib.import_module('pkg.attack'), cfg['a'])\n")},
        [("grads-mask", "pkg/attack.py", 7)]),
    "a class its own module looks up by getattr": ({
        "pkg/__init__.py": "from .attack import Attack\n",
        "pkg/attack.py": _attack() + (
            "    import sys\n"
            "    def make(name):\n"
            "      return getattr(sys.modules[__name__], name)()\n")},
        [("grads-mask", "pkg/attack.py", 7)]),
}


@pytest.mark.parametrize("name", sorted(UNEXPORTED))
def test_a_left_out_class_is_dropped_only_when_nothing_reaches_it(name):
  files, expected = UNEXPORTED[name]
  assert _in_project(files) == expected


def _head(lines):
  return ("""\
    import tensorflow as tf
    from base import Classifier
    from tensorflow.contrib.slim.nets import resnet_v1

    class Head(Classifier):
      def __init__(self, model, n):
        Classifier.__init__(self, model)
        self.y = tf.placeholder(tf.float32, [None, n])
        features = model.graph().get_tensor_by_name("pool:0")
""" + "".join(f"        {line}\n" for line in lines) + """\
        names = ["fc_new"]
        self.logits = tf.layers.dense(features, n, name=names[0])
        self.set_trainable(names)
        self.define_training()
""")


_ADAPT = 'features = tf.keras.layers.Dense(512, name="adapt")(features)'
_UTILS = """\
    import tensorflow as tf

    def warm_start(sess, path, scope):
      saver = tf.train.Saver(tf.global_variables(scope))
      saver.restore(sess, path)

    if __name__ == "__main__":
      print("self test")
    """

_FOUND = [("var-list-filter", "base.py", 9)]

CONSTANT_GRAPH = {
    "a head built by layers the filter keeps": ({"head.py": _head([])}, []),
    "a head reshaping the fetched tensor": ({"head.py": _head([
        "features = tf.reshape(features, [-1, 2048])"])}, []),
    # Dogs-Vs-Cats: a pooling layer after the kept convolution.
    "a head pooling the fetched tensor": ({"head.py": _head([
        "features = tf.layers.average_pooling2d(features, 7, 1)"])}, []),
    "a slim backbone built on the fetched tensor": ({"head.py": _head([
        "features, _ = resnet_v1.resnet_v1_50(features)"])}, _FOUND),
    "a Keras layer the names leave out": ({"head.py": _head([_ADAPT])},
                                          _FOUND),
    "a layer the names keep, warm-started by init_from_checkpoint": ({
        "head.py": _head([_ADAPT.replace('"adapt"', '"fc_new"'),
                          'tf.train.init_from_checkpoint("pre.ckpt", '
                          '{"fc_new/": "fc_new/"})'])}, _FOUND),
    "weights loaded by load_weights in a script running the head": ({
        "head.py": _head([]),
        "warm.py": "import head\ndef warm(model):\n"
                   "  model.load_weights('w.h5')\n"}, _FOUND),
    # Dogs-Vs-Cats: a Keras script of its own loads its own model.
    "a model loaded by load_model in a script of another stack": ({
        "head.py": _head([]),
        "keras_tool.py": "import keras\nkeras.models.load_model('m.h5')\n"},
        []),
    "a utility with a self-test block restoring a checkpoint": ({
        "head.py": _head([]), "utils.py": _UTILS}, _FOUND),
}


@pytest.mark.parametrize("name", sorted(CONSTANT_GRAPH))
def test_a_head_over_a_frozen_graph_is_silent_only_when_it_builds_the_kept_layers(
    name):
  files, expected = CONSTANT_GRAPH[name]
  project = {"base.py": wholes._BASE, "loader.py": wholes._FROZEN_PB,
             **files}
  assert _in_project(project) == expected


_VS = """\
    import tensorflow as tf

    def vs_multilayer(x, name):
      with tf.variable_scope(name):
        h = tf.layers.dense(x, 256)
        return tf.layers.dense(h, 10)

    def flatten(t):
      return tf.reshape(t, [-1, 2048])
    """


def _train(fed):
  return f"""\
    import tensorflow as tf
    from tensorflow.contrib.slim.nets import resnet_v1
    from model import vs_multilayer, flatten

    def train(images, labels):
      feats, _ = resnet_v1.resnet_v1_50(images)
      logits = vs_multilayer({fed}, "APN")
      loss = tf.losses.softmax_cross_entropy(labels, logits)
      var_list = [v for v in tf.trainable_variables() if v.name.startswith("APN")]
      return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=var_list)
    """


HELPER_INPUTS = {
    "the inputs flattened by a project helper": ("flatten(images)", []),
    "a backbone flattened by a project helper": (
        "flatten(feats)", [("var-list-filter", "train.py", 9)]),
    "a backbone fed directly": (
        "feats", [("var-list-filter", "train.py", 9)]),
}


@pytest.mark.parametrize("name", sorted(HELPER_INPUTS))
def test_a_pass_through_helper_passes_a_backbone_on(name):
  fed, expected = HELPER_INPUTS[name]
  assert _in_project({"model.py": _VS, "train.py": _train(fed)}) == expected


def _pu_net(counter="step = tf.Variable(0, trainable=False)",
            saver=wholes._OWN_FILTER, before_loss="", head=""):
  main = wholes._main(counter, saver or "None")
  if saver is None:  # No warm start: the step alone.
    main = "".join(line for line in main.splitlines(True) if not any(
        word in line for word in ("assign_saver", "assign_model_path is")))
  if head:
    main = main.replace("import model_gen as MODEL_GEN\n",
                        f"import model_gen as MODEL_GEN\n    {head}\n")
  if before_loss:
    main = main.replace("loss = tf.reduce_mean(",
                        f"{before_loss}\n      loss = tf.reduce_mean(")
  return {"main.py": main, "model_gen.py": wholes._GEN}


SCOPED_HELPER = {
    # One rule at a time: the step counter made with `trainable=False`.
    "a step counter beside the model's scope": (
        _pu_net(saver=None), []),
    "a trained counter beside the model's scope": (
        _pu_net(counter="step = tf.Variable(0.0)", saver=None),
        [("var-list-filter", "main.py", 16)]),
    # The helper called only under a layer's scope.
    "a helper called only under a scope": (_pu_net(saver=None), []),
    "a helper imported under an alias and called outside": (
        _pu_net(saver=None, head="from model_gen import instance_norm as inorm",
                before_loss="pred = inorm(pred)"),
        [("var-list-filter", "main.py", 18)]),
    "a helper read as a value and called outside": (
        _pu_net(saver=None, before_loss=(
            "for post in [MODEL_GEN.instance_norm]:\n"
            "        pred = post(pred)")),
        [("var-list-filter", "main.py", 18)]),
    "a helper passed to partial": (
        _pu_net(saver=None, head="import functools", before_loss=(
            "norm = functools.partial(MODEL_GEN.instance_norm)")),
        [("var-list-filter", "main.py", 18)]),
    # The inputs from a helper returning placeholders, sizes from flags.
    "inputs from a placeholder helper sized by parse_args": (
        _pu_net(saver=None), []),
    "inputs sized by another call's output": (
        {**_pu_net(saver=None), "main.py": _pu_net(saver=None)[
            "main.py"].replace("parser.parse_args()", "parser.build()")},
        [("var-list-filter", "main.py", 16)]),
    # The Saver warm-starting the very filter the step trains.
    "a saver restoring the trained filter": (_pu_net(), []),
    "a saver restoring another part": (
        _pu_net(saver=wholes._OTHER_PART),
        [("var-list-filter", "main.py", 16)]),
}


_BY_PREFIX = ("[var for var in tf.trainable_variables() "
              "if var.name.startswith(prefix)]")


def _restoring_by_prefix(restored):
  files = _pu_net(counter="step = tf.Variable(0, trainable=False); "
                  "prefix = 'generator'", saver=_BY_PREFIX)
  files["main.py"] = files["main.py"].replace(
      "gen_tvars = [var for var in tf.trainable_variables()\n"
      "                   if var.name.startswith(\"generator\")]",
      f"gen_tvars = {_BY_PREFIX}").replace(
          "if assign_model_path is not None:",
          f"if assign_model_path is not None:\n          prefix = '{restored}'")
  return files


SCOPED_HELPER.update({
    # The same comprehension text reading `prefix`: what it holds decides.
    "a saver's filter text reading another prefix": (
        _restoring_by_prefix("encoder"), [("var-list-filter", "main.py", 16)]),
})


@pytest.mark.parametrize("name", sorted(SCOPED_HELPER))
def test_each_rule_of_a_models_one_scope(name):
  files, expected = SCOPED_HELPER[name]
  assert _in_project(files) == expected


def test_a_placeholder_fed_through_a_helper_is_data():
  files = _pu_net(saver=None)
  files["model_gen.py"] = wholes._GEN.replace(
      "points = tf.placeholder(tf.float32, shape=(batch_size, num_point, 3))",
      "points = tf.placeholder(tf.float32, shape=shape_of(batch_size))")
  assert _in_project(files) == []


def _norm_helpers(n):
  return "".join(textwrap.dedent(f"""
      def norm{i}(net):
        shift = tf.get_variable('shift', shape=[3])
        return net + shift

      def layer{i}(x, n, scope):
        with tf.variable_scope(scope):
          return norm{i}(tf.layers.dense(x, n))
      """) for i in range(n))


def _scoped_work(n):
  files = _pu_net(saver=None)
  sources = [_files.Source("main.py", textwrap.dedent(files["main.py"])),
             _files.Source("model_gen.py", textwrap.dedent(
                 files["model_gen.py"]) + _norm_helpers(n))]
  work, found = scanned.calls_made(
      lambda: _scan.scan_project(sources)[0], "_named_scopes.py")
  assert found == []
  return work


def test_helpers_called_under_scopes_cost_linear_work():
  # Was quadratic: each helper's variable walked every module naming it
  # twice (x16 for 4 times the helpers at ecfa57e).
  small, large = _scoped_work(10), _scoped_work(40)
  assert large <= 6 * small, (small, large)


def _packages(n):
  sources = []
  for i in range(n):
    sources.append(_files.Source(f"p{i}/__init__.py",
                                 f"from .m import Attack{i}\n"))
    sources.append(_files.Source(f"p{i}/m.py", textwrap.dedent(
        _MASKED.format(base="").replace("MaskedAttack", f"Attack{i}"))))
  work, found = _lines_run(lambda: _scan.scan_project(sources)[0],
                           "_unexported.py")
  assert len(found) == n
  return work


def _lines_run(code, where):
  """(the lines of files whose path ends with `where` that `code()`
  runs, each time; what it returns): a loop's turns counted, which a
  count of calls misses."""
  count = [0]

  def trace(frame, event, arg):
    del arg
    if not frame.f_code.co_filename.endswith(where):
      return None
    if event == "line":
      count[0] += 1
    return trace

  sys.settrace(trace)
  try:
    result = code()
  finally:
    sys.settrace(None)
  return count[0], result


def test_left_out_classes_cost_linear_work():
  # Was quadratic: each finding looked for its `__init__.py` and its
  # name through every module.
  small, large = _packages(20), _packages(80)
  assert large <= 6 * small, (small, large)
