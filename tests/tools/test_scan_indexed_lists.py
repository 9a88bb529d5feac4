"""`tfpartial scan` on a `var_list` written out as a model's variables
taken one by one by position (part twenty-nine's C3W2 assignment:
`to_fine_tune = [model.trainable_variables[0], ...[3]]`, the one list
the custom step differentiates and applies): some variables by
position, as a slice (`trainable_variables[:4]`) picks them. Beside
each, the look-alikes that must stay silent: a GAN's and an
actor-critic's halves picked by position and each trained, a list of
whole variables by name, a list only printed."""

import pytest

import scanned


_found = scanned.in_project

_NOTEBOOK = """\
    import tensorflow as tf
    detection_model = model_builder.build(model_config=configs['model'], is_training=True)
    checkpoint = tf.train.Checkpoint(model=detection_model)
    checkpoint.restore(checkpoint_path).expect_partial()
    to_fine_tune = [
        detection_model.trainable_variables[0],
        detection_model.trainable_variables[1],
        detection_model.trainable_variables[2],
    ]
    @tf.function
    def train_step_fn(images, model, optimizer, vars_to_fine_tune):
        with tf.GradientTape() as tape:
            total_loss = model.loss(model.predict(images))
            gradients = tape.gradient(total_loss, vars_to_fine_tune)
            optimizer.apply_gradients(zip(gradients, vars_to_fine_tune))
        return total_loss
    for idx in range(num_batches):
        train_step_fn(batches[idx], detection_model, optimizer, to_fine_tune)
    """


def test_a_notebook_list_of_variables_by_position():
  assert _found(_NOTEBOOK) == [("var-list-filter", "t.py", 5)]


def test_the_same_list_by_a_slice_is_found_as_before():
  sliced = _NOTEBOOK.replace("""[
        detection_model.trainable_variables[0],
        detection_model.trainable_variables[1],
        detection_model.trainable_variables[2],
    ]""", "detection_model.trainable_variables[:3]")
  assert _found(sliced) == [("var-list-filter", "t.py", 5)]


_EAGER = """\
    import tensorflow as tf
    def train(model, data, opt):
        head = {head}
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = model.loss(model(x), y)
            grads = tape.gradient(loss, head)
            opt.apply_gradients(zip(grads, head))
    """


@pytest.mark.parametrize("head, expected", [
    ("[model.trainable_variables[0], model.trainable_variables[1]]",
     [("var-list-filter", "t.py", 3)]),
    ("[model.trainable_variables[4]]", [("var-list-filter", "t.py", 3)]),
    # Whole variables by name, and every variable: nothing left out.
    ("[model.kernel, model.bias]", []),
    ("model.trainable_variables", []),
    # Two collections' elements: not one list's positions.
    ("[model.trainable_variables[0], other.trainable_variables[0]]", []),
])
def test_an_eager_step_over_variables_by_position(head, expected):
  assert _found(_EAGER.format(head=head)) == expected


_HALVES = """\
    import tensorflow as tf
    def train(gan, data, d_opt, g_opt):
        tv = gan.trainable_variables
        d_vars = [tv[0], tv[1]]
        g_vars = [tv[2], tv[3]]
        for x in data:
            with tf.GradientTape(persistent=True) as tape:
                d_loss, g_loss = gan.losses(x)
            d_opt.apply_gradients(zip(tape.gradient(d_loss, d_vars), d_vars))
            g_opt.apply_gradients(zip(tape.gradient(g_loss, g_vars), g_vars))
    """

_ACTOR_CRITIC = """\
    import tensorflow as tf
    def train(model, data, a_opt, c_opt):
        tv = model.trainable_variables
        actor = [tv[0], tv[1]]
        critic = [tv[2], tv[3]]
        for x in data:
            with tf.GradientTape(persistent=True) as tape:
                a_loss, c_loss = model.losses(x)
            a_opt.minimize(a_loss, actor, tape=tape)
            c_opt.minimize(c_loss, critic, tape=tape)
    """

_SHOWN = """\
    def show(model):
        for v in [model.trainable_variables[0], model.trainable_variables[1]]:
            print(v.name, v.shape)
    """


@pytest.mark.parametrize("code", [_HALVES, _ACTOR_CRITIC, _SHOWN])
def test_halves_by_position_and_a_printed_list_stay_silent(code):
  assert _found(code) == []
