"""`tfpartial scan` (grads-mask): gradients zeroed for the variables a
test picks, where the same test picks those variables' gradients out of
the same list and an `assign` writes a value made from them (free
adversarial training, ashafahi/free_adv_train: the input perturbation
variable ascends its own gradient's sign, the model's step gets zeros
for it). Those variables are updated by a rule of their own, not frozen.
Twins that stay findings: the picked gradients only summarised, the
picked variables written back from a saved copy, every gradient
accumulated (no test), an assign made from another test's gradients."""

import pytest

import scanned


def _masks(code):
  return scanned.in_text(code, "grads-mask")


def _free_training(picked, written):
  return f"""\
    optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9)
    grads = optimizer.compute_gradients(total_loss)
    pert_grad = [g for g, v in grads if {picked}]
    new_pert = model.pert + epsilon * tf.sign(pert_grad[0])
    assigned = {written}
    no_pert_grad = [(tf.zeros_like(v), v) if 'perturbation' in v.name
                    else (g, v) for g, v in grads]
    with tf.control_dependencies([assigned]):
      train_op = optimizer.apply_gradients(no_pert_grad)
    """


def test_a_variable_ascending_its_own_gradient_is_not_frozen():
  code = _free_training("'perturbation' in v.name", "tf.assign(model.pert, "
                        "tf.clip_by_value(new_pert, -epsilon, epsilon))")
  assert _masks(code) == []


def test_the_same_by_assign_add_is_not_frozen():
  code = _free_training("'perturbation' in v.name",
                        "model.pert.assign_add(epsilon * pert_grad[0])")
  assert _masks(code) == []


FOUND = {
    # The picked gradients only summarised: the variables stay fixed.
    "the picked gradients only summarised": ("""\
        grads = optimizer.compute_gradients(total_loss)
        emb_grad = [g for g, v in grads if 'embedding' in v.name]
        tf.summary.histogram("emb_grad", emb_grad[0])
        masked = [(tf.zeros_like(v), v) if 'embedding' in v.name
                  else (g, v) for g, v in grads]
        train_op = optimizer.apply_gradients(masked)
        """, 4),
    # The picked variables written back from a copy kept before the step.
    "the picked variables written back from a saved copy": ("""\
        grads = optimizer.compute_gradients(total_loss)
        emb = [v for g, v in grads if 'embedding' in v.name]
        saved = tf.identity(emb[0])
        masked = [(tf.zeros_like(v), v) if 'embedding' in v.name
                  else (g, v) for g, v in grads]
        step = optimizer.apply_gradients(masked)
        with tf.control_dependencies([step]):
          train_op = tf.assign(emb[0], saved)
        """, 4),
    # Every gradient accumulated, no test picks: the zeros still freeze.
    "every gradient accumulated": ("""\
        grads = optimizer.compute_gradients(total_loss)
        accumulate = [acc.assign_add(g) for acc, (g, v) in zip(accs, grads)]
        masked = [(tf.zeros_like(v), v) if 'embedding' in v.name
                  else (g, v) for g, v in grads]
        train_op = optimizer.apply_gradients(masked)
        """, 3),
    # Another test's gradients written: the zeroed variables stay fixed.
    "an assign made from another test's gradients": ("""\
        grads = optimizer.compute_gradients(total_loss)
        noise_grad = [g for g, v in grads if 'noise' in v.name]
        moved = tf.assign(model.noise, model.noise + tf.sign(noise_grad[0]))
        masked = [(tf.zeros_like(v), v) if 'embedding' in v.name
                  else (g, v) for g, v in grads]
        with tf.control_dependencies([moved]):
          train_op = optimizer.apply_gradients(masked)
        """, 4),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_zeros_for_variables_with_no_rule_of_their_own_are_found(name):
  code, line = FOUND[name]
  assert _masks(code) == [("grads-mask", line)]
