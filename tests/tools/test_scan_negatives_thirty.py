"""`tfpartial scan` (var-list-filter) on the negatives of part thirty:
lists that leave out nothing the step would train.

- A class's own dict of lists read by key (`self.variables['trainable']`
  where `self.variables = {}`, filled with each variable whose own
  `trainable` flag is set; YeongHyeon/Normalizing-Flow-TF2) is the
  entry's values, not a pick from a model's `variables` collection.
  Twin: the entry holds a slice of the model's variables: found there.
- A transformer's pooler left out of one step, the head left out of it
  too but trained by a second step of the same loss (XLM-R fine-tuning
  at two learning rates, moizsaifee/kaggle-jigsaw ... 3rd place): the
  head trains, the pooler gets no gradient (the model reads only the
  per-token output). Twins: the model reads the pooled output, or no
  step trains the head: found.
"""

import scanned

_DICT_ENTRY = """\
    class Agent(object):
      def __init__(self, model):
        self.variables = {}
        self.model = model
        self.variables['trainable'] = ENTRY
        for key in list(self.model.layer.parameters.keys()):
          trainable = self.model.layer.parameters[key].trainable
          if trainable:
            self.variables['trainable'].append(
                self.model.layer.parameters[key])
        self.optimizer = tf.optimizers.RMSprop(1e-3)

      def step(self, x):
        with tf.GradientTape() as tape:
          loss = self.model(x)
        grads = tape.gradient(loss, self.variables['trainable'])
        self.optimizer.apply_gradients(
            zip(grads, self.variables['trainable']))
    """


def test_a_dict_entry_of_variables_kept_by_their_flag_is_silent():
  assert scanned.found(_DICT_ENTRY.replace("ENTRY", "[]")) == []


def test_a_dict_entry_holding_a_slice_of_the_variables_is_found():
  code = _DICT_ENTRY.replace("ENTRY", "model.trainable_variables[-2:]")
  assert scanned.found(code) == [("var-list-filter", 5)]


_TWO_RATES = """\
    from transformers import TFRobertaModel

    def build_model(transformer):
      inp = tf.keras.layers.Input(shape=(128,), dtype=tf.int32)
      x = READ
      out = tf.keras.layers.Dense(1, name='custom_head')(x)
      return tf.keras.Model(inputs=[inp], outputs=[out])

    model = build_model(TFRobertaModel.from_pretrained('xlm-roberta-large'))
    optimizer_transformer = tf.keras.optimizers.Adam(1e-5)
    optimizer_head = tf.keras.optimizers.Adam(1e-3)

    def train_step(features, labels):
      body = [v for v in model.trainable_variables
              if 'pooler' not in v.name and 'custom' not in v.name]
      head = [v for v in model.trainable_variables if 'custom' in v.name]
      with tf.GradientTape(persistent=True) as tape:
        loss = compute_loss(labels, model(features, training=True))
      grads_body = tape.gradient(loss, body)
      grads_head = tape.gradient(loss, head)
      optimizer_transformer.apply_gradients(zip(grads_body, body))
      HEAD_STEP
    """
_TOKENS = "transformer(inp)[0][:, 0, :]"
_HEAD_STEP = "optimizer_head.apply_gradients(zip(grads_head, head))"


def _two_rates(read=_TOKENS, head_step=_HEAD_STEP, left_out="'pooler'"):
  return _TWO_RATES.replace("READ", read).replace(
      "HEAD_STEP", head_step).replace("'pooler'", left_out)


def test_a_pooler_left_out_beside_a_head_trained_apart_is_silent():
  assert scanned.found(_two_rates()) == []


def test_the_pooled_output_read_freezes_the_pooler():
  code = _two_rates(read="transformer(inp).pooler_output")
  assert scanned.found(code) == [("var-list-filter", 14)]


def test_a_head_no_step_trains_is_found():
  assert scanned.found(_two_rates(head_step="pass")) == [
      ("var-list-filter", 14)]


def test_another_layer_left_out_beside_the_head_is_found():
  assert scanned.found(_two_rates(left_out="'embeddings'")) == [
      ("var-list-filter", 14)]


# A model built whole by one helper that opens the scope its caller names
# (jiyanggao/TURN-TAP and CBR: `vs_multilayer.vs_multilayer(x, "APN")`),
# the step training that scope: the whole model.
_HELPER = """\
    def multilayer(x, name, reuse=False):
      with tf.variable_scope(name):
        if reuse:
          tf.get_variable_scope().reuse_variables()
        h = tf.layers.dense(x, 1000, activation=tf.nn.relu, name='layer1')
        return tf.layers.dense(h, 4, name='layer2')
    """
_BUILT = """\
    import layers

    class Model(object):
      def __init__(self, lr):
        self.lr = lr

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


def _built(build):
  return scanned.in_project({"layers.py": _HELPER,
                             "model.py": _BUILT.replace("BUILD", build)})


def test_the_one_scope_a_helper_builds_the_model_under_is_silent():
  assert _built('scores = layers.multilayer(x, "APN")') == []


def test_a_backbone_built_under_a_second_given_scope_is_found():
  build = ('feats = layers.multilayer(x, "backbone")\n'
           '        scores = layers.multilayer(feats, "APN")')
  assert _built(build) == [("var-list-filter", "model.py", 24)]


def test_a_layer_built_outside_every_scope_is_found():
  build = ('feats = tf.layers.dense(x, 64, name="embed")\n'
           '        scores = layers.multilayer(feats, "APN")')
  assert _built(build) == [("var-list-filter", "model.py", 24)]


# A federated server applying the update the clients sent, each entry to
# the variable its key names (apple/pfl-research): the update chooses.
_SERVER = """\
    class Server(object):
      def __init__(self, model, optimizer):
        self.variable_map = {v.name: v for v in model.trainable_variables}
        self.optimizer = optimizer

      def apply_model_update(self, statistics):
        pairs = []
        for variable_name, difference in statistics.items():
          SKIP
          variable = self.variable_map[variable_name]
          pairs.append((-1 * difference, variable))
        self.optimizer.apply_gradients(pairs)
    """


def test_an_update_applied_to_the_variables_its_keys_name_is_silent():
  assert scanned.found(_SERVER.replace("SKIP", "pass")) == []


def test_an_update_with_keys_skipped_by_name_is_found():
  code = _SERVER.replace("SKIP", "if 'embedding' in variable_name: continue")
  assert scanned.found(code) == [("var-list-filter", 10)]


# The project's own `get_variables(f)`: every variable a function reads,
# by a tape's `watched_variables()` (google-research/self-organising-
# systems: a cellular automaton trained against a fixed loss network).
_CA = """\
    def get_variables(ARG):
      BODY

    class CAModel:
      def __init__(self):
        self.w = tf.Variable(tf.zeros([16, 16]))
        self.b = tf.Variable(tf.zeros([16]))
        self.params = get_variables(ARG_GIVEN)

      def embody(self):
        return lambda x: tf.matmul(x, self.w) + self.b
    """
_SYNTH = """\
    from ca import CAModel

    class Synth:
      def __init__(self, loss_model):
        self.loss_model = loss_model
        self.ca = CAModel()
        self.trainer = tf.keras.optimizers.Adam(1e-3)

      @tf.function
      def train_step(self, x):
        with tf.GradientTape() as g:
          x = self.ca.embody()(x)
          loss = self.loss_model(x)
        grads = g.gradient(loss, self.ca.params)
        grads = [g / (tf.norm(g) + 1e-8) for g in grads]
        self.trainer.apply_gradients(zip(grads, self.ca.params))
    """


def _ca(arg, body, given):
  ca = _CA.replace("ARG_GIVEN", given).replace("ARG", arg).replace(
      "BODY", body)
  return scanned.in_project({"ca.py": ca, "synth.py": _SYNTH})


def test_every_variable_a_tape_watches_is_silent():
  body = ("with tf.GradientTape() as g:\n"
          "        f()\n"
          "        return g.watched_variables()")
  assert _ca("f", body, "self.embody") == []


def test_the_projects_own_get_variables_by_scope_is_found():
  body = "return [v for v in tf.trainable_variables() if scope in v.name]"
  assert _ca("scope", body, "'ca/dense'") == [
      ("var-list-filter", "synth.py", 14)]
