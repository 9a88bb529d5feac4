"""`tfpartial scan`'s `var-list-filter` on the forms other teams write
the same freeze in (rewrites of parts ten to thirteen's reviewed
instances): a list filtered at the top of a script or in an enclosing
function and trained by a `@tf.function def train_step` that only reads
it; the collections of some scopes joined by `sum(..., [])` or
`itertools.chain.from_iterable`; `compute_gradients`' pairs kept by a
`filter(lambda gv: ...)` testing names; a model's layers chosen by name
in a comprehension; the top of one model's variables beside another's
whole. The look-alikes stay silent:
a GAN's two lists, an actor and a critic, a target network synced from
the trained one, two optimizers that between them train everything, a
GAN's halves each joined by `sum`, pairs kept when they have a
gradient, layers kept when trainable, a slice and the rest put back. Synthetic sources in the shape of
real code."""

import textwrap

import pytest
import scanned


_found = scanned.found


_READ_BY_A_STEP = """\
    model = build_model()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    {chosen}

    @tf.function
    def train_step(x, y):
      with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
      grads = tape.gradient(loss, train_vars)
      optimizer.apply_gradients(zip(grads, train_vars))
    """

_CLOSURE = """\
    def make_train_step(model, optimizer):
      train_vars = {chosen}

      @tf.function
      def train_step(images, labels):
        with tf.GradientTape() as tape:
          loss = model.loss(model(images), labels)
        gradients = tape.gradient(loss, train_vars)
        optimizer.apply_gradients(zip(gradients, train_vars))
        return loss
      return train_step
    """

_JOINED = """\
    import itertools

    {first_scopes}
    first = {join}
    first_op = tf.train.AdamOptimizer(1e-4).minimize(first_loss, var_list=first)
    """

_PAIRS_KEPT = """\
    opt = tf.train.MomentumOptimizer(lr, 0.9)
    grads_and_vars = opt.compute_gradients(loss)
    grads_and_vars = list(filter(lambda gv: {test}, grads_and_vars))
    train_op = opt.apply_gradients(grads_and_vars)
    """

_SUM = ("sum([tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, s) "
        "for s in {scopes}], [])")

_PAIR = """\
    first = [v for v in {all} if {first}]
    second = [v for v in {all} if {second}]

    def train_first(x, y):
      with tf.GradientTape() as tape:
        loss = first_loss(x, y)
      first_opt.apply_gradients(zip(tape.gradient(loss, first), first))

    def train_second(x, y):
      with tf.GradientTape() as tape:
        loss = second_loss(x, y)
      second_opt.apply_gradients(zip(tape.gradient(loss, second), second))
    """

POSITIVE = {
    # Few-shot detection: only the box predictor's heads, by prefix.
    "a script's filter by prefixes read by its train step": (
        _READ_BY_A_STEP.format(chosen=(
            "train_vars = [v for v in model.trainable_variables "
            "if v.name.startswith(tuple(prefixes))]")),
        [("var-list-filter", 3)]),
    "a script's slice of the variables read by its train step": (
        _READ_BY_A_STEP.format(
            chosen="train_vars = model.trainable_variables[-20:]"),
        [("var-list-filter", 3)]),
    # Transfer learning: every layer but the pretrained base.
    "a script's layers by position read by its train step": (
        _READ_BY_A_STEP.format(chosen=(
            "train_vars = [w for layer in model.layers[1:] "
            "for w in layer.trainable_weights]")),
        [("var-list-filter", 3)]),
    "an enclosing function's filter read by its train step": (
        _CLOSURE.format(chosen=(
            "[v for v in model.trainable_variables "
            "if 'BoxPredictor' in v.name]")),
        [("var-list-filter", 2)]),
    # Style transfer's decoder scopes, one collection each, joined.
    "the collections of some scopes joined by sum": (
        _JOINED.format(first_scopes="scopes = ['attention', 'decoder']",
                       join=_SUM.format(scopes="scopes")),
        [("var-list-filter", 4)]),
    # slim's `--trainable_scopes`, chained.
    "the collections of some scopes chained": (
        _JOINED.format(
            first_scopes="scopes = FLAGS.trainable_scopes.split(',')",
            join=("list(itertools.chain.from_iterable(tf.get_collection("
                  "tf.GraphKeys.TRAINABLE_VARIABLES, s) for s in scopes))")),
        [("var-list-filter", 4)]),
    "compute_gradients' pairs kept by a lambda testing names": (
        _PAIRS_KEPT.format(test="gv[1].name.startswith('task/')"),
        [("var-list-filter", 3)]),
    # Transfer learning: the new head's layers, by name.
    "a model's layers chosen by name in a comprehension": (
        _READ_BY_A_STEP.format(chosen=(
            "train_vars = [w for l in model.layers "
            "if l.name.startswith('head') for w in l.trainable_weights]")),
        [("var-list-filter", 3)]),
    # The top of a pretrained base, and a new head whole.
    "some of a base's variables beside a head's": (
        _READ_BY_A_STEP.format(chosen=(
            "train_vars = model.trainable_variables[-20:] + "
            "head.trainable_variables")),
        [("var-list-filter", 3)]),
}

NEGATIVE = {
    "a model's layers kept when trainable": _READ_BY_A_STEP.format(
        chosen=("train_vars = [w for l in model.layers if l.trainable "
                "for w in l.trainable_weights]")),
    # What the slice leaves out is put back.
    "a slice and the rest of the same model": _READ_BY_A_STEP.format(
        chosen=("train_vars = model.trainable_variables[:-2] + "
                "model.trainable_variables")),
    "a GAN's layers, each half by name": """\
        gen = [w for l in model.layers if l.name.startswith('gen')
               for w in l.trainable_weights]
        disc = [w for l in model.layers if l.name.startswith('disc')
                for w in l.trainable_weights]

        def train_step(x, z):
          with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            g_loss, d_loss = losses(model, x, z)
          g_opt.apply_gradients(zip(g_tape.gradient(g_loss, gen), gen))
          d_opt.apply_gradients(zip(d_tape.gradient(d_loss, disc), disc))
        """,
    # A GAN: each half's scopes joined, each trained by its own loss.
    "a GAN's two halves each joined by sum": _JOINED.format(
        first_scopes="", join=_SUM.format(scopes="['gen', 'gen_head']")
    ) + textwrap.dedent("""\
        second = {}
        second_op = tf.train.AdamOptimizer(1e-4).minimize(
            second_loss, var_list=second)
        """).format(_SUM.format(scopes="['disc', 'disc_head']")),
    "compute_gradients' pairs kept when they have a gradient": (
        _PAIRS_KEPT.format(test="gv[0] is not None")),
    "every variable, read by the train step": _READ_BY_A_STEP.format(
        chosen="train_vars = model.trainable_variables"),
    "a parameter of the enclosing function": _CLOSURE.format(
        chosen="model.trainable_variables").replace(
            "model, optimizer", "model, optimizer, train_vars").replace(
                "  train_vars = model.trainable_variables\n", ""),
    "a GAN's two lists, each read by its step": _PAIR.format(
        all="tf.trainable_variables()",
        first="v.name.startswith('generator')",
        second="v.name.startswith('discriminator')"),
    "an actor and a critic": _PAIR.format(
        all="tf.trainable_variables()", first="'actor' in v.name",
        second="'critic' in v.name"),
    # Two learning rates that between them train the whole model.
    "a list and its complement": _PAIR.format(
        all="model.trainable_variables", first="'backbone' in v.name",
        second="'backbone' not in v.name"),
    # DQN: the target network is written from the online one, not left
    # out of training.
    "a target network synced from the trained one": """\
        q_vars = [v for v in tf.trainable_variables()
                  if v.name.startswith('q_net')]
        target_vars = [v for v in tf.trainable_variables()
                       if v.name.startswith('target_net')]

        def train_step(s, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(q_net(s) - y))
          opt.apply_gradients(zip(tape.gradient(loss, q_vars), q_vars))

        def sync():
          for t, q in zip(target_vars, q_vars):
            t.assign(q)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_list_chosen_around_the_step_is_found(name):
  source, expected = POSITIVE[name]
  assert _found(source) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_lists_that_train_everything_between_them_stay_silent(name):
  assert _found(NEGATIVE[name]) == []
