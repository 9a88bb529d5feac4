"""`tfpartial scan` after the review of part thirty's silences: each of
the three rules that silence a look-alike holds only where the code
shows what it assumes.

- One scope a project helper opens with its caller's name is the
  model's root only when what the helper is given comes from its
  function's inputs (parameters, placeholders, and ops of them that make
  no weights): a backbone built by a library (slim's `resnet_v1_50`, a
  hub module, a batch norm, `keras.applications`) and fed to the helper
  is a part built outside, and the step training the helper's scope
  leaves it out (jiyanggao/TURN-TAP and CBR stay silent).
- An update passed in as a mapping chooses the variables it trains only
  when the method applies it as given: rebound by a filter, shortened
  in place, or built by a filter in the project's caller, it is a part
  (apple/pfl-research stays silent).
- A class's own dict of lists read by key is the entry's values: an
  entry filled under a name test (or holding a comprehension that tests
  names) is a filter whatever the dict is called; an entry filled under
  each variable's own `trainable` flag is not (YeongHyeon/Normalizing-
  Flow-TF2 stays silent). The entries are read once per class and
  attribute, not once per read.
- A call of a library's function that shares its last name with a
  project helper (`slim.conv2d(..., scope='conv1')`) names no scope the
  project's helper opens.
"""

import pytest

import scanned

_HELPER = """\
    def multilayer(x, name, middle=1000, reuse=False):
      with tf.variable_scope(name):
        h = tf.layers.dense(x, middle, activation=tf.nn.relu, name='layer1')
        return tf.layers.dense(h, 4, name='layer2')
    """
_BUILT = """\
    import layers
    from nets import resnet_v1
    import tensorflow_hub as hub
    from tensorflow.keras.applications import ResNet50

    class Model(object):
      def __init__(self, lr):
        self.lr = lr
        self.size = 1000

      def compute_loss(self, x, labels):
        BUILD
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=scores, labels=labels))

      def get_variables_by_name(self, name_list):
        v_dict = {name: [] for name in name_list}
        for v in tf.trainable_variables():
          for name in name_list:
            if name in v.name:
              v_dict[name].append(v)
        return v_dict

      def training(self, loss):
        v_dict = self.get_variables_by_name(["APN"])
        optimizer = tf.train.AdamOptimizer(self.lr)
        return optimizer.minimize(loss, var_list=v_dict["APN"])
    """


def _built(*build):
  code = _BUILT.replace("BUILD", "\n        ".join(build))
  return scanned.in_project({"layers.py": _HELPER, "model.py": code})


_STEP = 28  # The `minimize` of `training` with a two-line BUILD.


@pytest.mark.parametrize("backbone", [
    "feats, _ = resnet_v1.resnet_v1_50(x)",
    "feats = hub.Module('https://tfhub.dev/google/x/1')(x)",
    "feats = tf.layers.batch_normalization(x)",
    "feats = ResNet50(include_top=False)(x)",
    "feats = tf.keras.applications.ResNet50(include_top=False)(x)",
], ids=["slim", "hub", "batch_norm", "applications", "applications_dotted"])
def test_a_library_backbone_fed_to_the_one_named_scope_is_found(backbone):
  assert _built(backbone, 'scores = layers.multilayer(feats, "APN")') == [
      ("var-list-filter", "model.py", _STEP)]


def test_a_backbone_given_as_a_keyword_is_found():
  assert _built("feats, _ = resnet_v1.resnet_v1_50(x)",
                'scores = layers.multilayer(x=feats, name="APN")') == [
                    ("var-list-filter", "model.py", _STEP)]


@pytest.mark.parametrize("build", [
    ["x = tf.nn.l2_normalize(x, dim=1)",
     'scores = layers.multilayer(x, "APN", middle=self.size)'],
    ["h = tf.reshape(tf.placeholder(tf.float32, [None, 8]), [-1, 8])",
     'scores = layers.multilayer(tf.concat([x, h], 1), "APN")'],
], ids=["normalized_input", "placeholder"])
def test_the_one_named_scope_fed_its_functions_inputs_is_silent(build):
  assert _built(*build) == []


_SERVER = """\
    class Server(object):
      def __init__(self, model, optimizer):
        self.variable_map = {v.name: v for v in model.trainable_variables}
        self.optimizer = optimizer

      def apply_model_update(self, statistics):
        CHANGE
        pairs = []
        for variable_name, difference in statistics.items():
          variable = self.variable_map[variable_name]
          pairs.append((-1 * difference, variable))
        self.optimizer.apply_gradients(pairs)
    """


def _server(change="pass"):
  return _SERVER.replace("CHANGE", change)


def test_an_update_rebound_by_a_filter_is_found():
  code = _server("statistics = {k: d for k, d in statistics.items() "
                 "if 'embedding' not in k}")
  assert scanned.found(code) == [("var-list-filter", 10)]


def test_an_update_shortened_in_place_is_found():
  code = _server("del statistics['embedding']")
  assert scanned.found(code) == [("var-list-filter", 10)]


_CALLER = """\

      def train(self, model, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        update = {v.name: g for g, v in zip(grads, model.trainable_variables)
                  KEPT}
        self.apply_model_update(update)
    """


def test_an_update_its_caller_builds_by_a_filter_is_found():
  code = _server() + _CALLER.replace(
      "KEPT", "if 'embedding' not in v.name")
  assert scanned.found(code) == [("var-list-filter", 10)]


_FILLED = """\

      def train(self, model, x, y):
        with tf.GradientTape() as tape:
          loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        update = {}
        for g, v in zip(grads, model.trainable_variables):
          if 'embedding' not in v.name:
            update[v.name] = g
        self.apply_model_update(statistics=update)
    """


def test_an_update_its_caller_fills_under_a_name_test_is_found():
  assert scanned.found(_server() + _FILLED) == [("var-list-filter", 21)]


def test_an_update_its_caller_builds_whole_is_silent():
  code = _server() + _CALLER.replace("KEPT", "")
  assert scanned.found(code) == []


_AGENT = """\
    import tensorflow as tf
    class Agent(object):
      def __init__(self, model):
        self.DICT = {}
        self.model = model
        self.DICT['trainable'] = FIRST
        for v in self.model.trainable_variables:
          if TEST:
            self.DICT['trainable'].append(v)
        self.optimizer = tf.optimizers.RMSprop(1e-3)

      def step(self, x):
        with tf.GradientTape() as tape:
          loss = self.model(x)
        grads = tape.gradient(loss, self.DICT['trainable'])
        self.optimizer.apply_gradients(zip(grads, self.DICT['trainable']))
    """


def _agent(test, first="[]", name="variables"):
  return _AGENT.replace("DICT", name).replace("TEST", test).replace(
      "FIRST", first)


@pytest.mark.parametrize("name", ["variables", "groups"])
@pytest.mark.parametrize("test", ["'embedding' not in v.name",
                                  "'head' in v.name",
                                  "v.name.startswith('head')"])
def test_an_entry_filled_under_a_name_test_is_found(test, name):
  assert scanned.found(_agent(test, name=name)) == [("var-list-filter", 15)]


@pytest.mark.parametrize("name", ["variables", "groups"])
def test_an_entry_filled_under_the_trainable_flag_is_silent(name):
  assert scanned.found(_agent("v.trainable", name=name)) == []


@pytest.mark.parametrize("name", ["variables", "groups"])
def test_an_entry_holding_a_name_filtered_comprehension_is_found(name):
  code = _agent("v.trainable", name=name, first=(
      "[v for v in model.trainable_variables if 'embedding' not in v.name]"))
  code = code.replace(code[code.index("    for v"):code.index(
      "    self.optimizer")], "")
  assert scanned.found(code) == [("var-list-filter", 12)]


def _many_readers(n):
  """One class: its dict's entry filled under the `trainable` flag, and
  `n` methods each reading the entry for a step of its own."""
  steps = "".join(
      f"\n  def step{i}(self, x):\n"
      "    with tf.GradientTape() as tape:\n"
      "      loss = self.model(x)\n"
      "    grads = tape.gradient(loss, self.variables['trainable'])\n"
      "    self.optimizer.apply_gradients(\n"
      "        zip(grads, self.variables['trainable']))\n"
      for i in range(n))
  return ("import tensorflow as tf\nclass Agent(object):\n"
          "  def __init__(self, model):\n"
          "    self.variables = {}\n"
          "    self.model = model\n"
          "    self.variables['trainable'] = []\n"
          "    for v in self.model.trainable_variables:\n"
          "      if v.trainable:\n"
          "        self.variables['trainable'].append(v)\n"
          "    self.optimizer = tf.optimizers.RMSprop(1e-3)\n" + steps)


def test_a_dict_entry_is_read_once_per_class():
  assert scanned.found(_many_readers(2)) == []
  small = scanned.scan_work(_many_readers(10), "_dict_entries.py") + (
      scanned.scan_work(_many_readers(10), "_selecting.py"))
  large = scanned.scan_work(_many_readers(40), "_dict_entries.py") + (
      scanned.scan_work(_many_readers(40), "_selecting.py"))
  assert large <= 6 * small, (small, large)


_CONV_HELPER = """\
    def conv2d(x, scope):
      with tf.variable_scope(scope):
        return tf.layers.conv2d(x, 8, 3, name='c')
    """
_SLIM_MODEL = """\
    import tensorflow.contrib.slim as slim
    import layers

    def build(x, y, convs):
      BACKBONE
      out = layers.conv2d(x, "head")
      loss = tf.reduce_mean(tf.square(out - y))
      tvars = tf.trainable_variables()
      head = [v for v in tvars if v.name.startswith("head")]
      return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
    """


_SHADOWED = """\

    def backbone(x, layers):
      return layers.conv2d(x, 'conv1')
    """


@pytest.mark.parametrize("backbone, after", [
    ("slim.conv2d(x, 64, [3, 3], scope='conv1')", ""),
    ("convs.conv2d(x, 'conv1')", ""),
    ("pass", _SHADOWED),
], ids=["library", "parameter", "parameter_named_as_the_module"])
def test_a_call_sharing_a_helpers_last_name_gives_it_no_scope(
    backbone, after):
  from tfpartial._tools.scan import _files
  from tfpartial._tools.scan import _project
  from tfpartial._tools.scan.idioms._wholes import _named_scopes
  import textwrap
  model_code = textwrap.dedent(_SLIM_MODEL.replace("BACKBONE", backbone))
  sources = [_files.Source("layers.py", textwrap.dedent(_CONV_HELPER)),
             _files.Source("model.py", model_code + textwrap.dedent(after))]
  project = _project.Project(sources)
  named = _named_scopes.helpers(project)
  assert named == {"conv2d"}
  model = next(m for m in project.modules if m.path == "model.py")
  project.parsed(model)
  assert _named_scopes.passed(project, model, named) == {"head"}
