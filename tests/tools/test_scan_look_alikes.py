"""`tfpartial scan` on code that looks like a hand-made freeze and is not
one (part eleven's negatives): a GAN's two halves trained by one
comprehension over their groups, or by one helper called once per half.
Beside them, the forms that are a freeze and stay found. The sources are
synthetic, in the shape of the real code."""

import pytest

from tests.tools.scanned import in_text

FOUND = {
    # A helper filtering by the prefix it is given, called once: the
    # head trains, the rest is frozen.
    "a helper called for one prefix": ("""\
        import tensorflow as tf
        loss = tf.reduce_mean(out)
        def optimizer(loss, prefix):
            optim = tf.train.AdamOptimizer(learning_rate=0.001)
            var_list = [v for v in tf.trainable_variables()
                        if v.name.startswith(prefix)]
            gradient = optim.compute_gradients(loss, var_list=var_list)
            return optim.apply_gradients(gradient)
        train_head = optimizer(loss, 'head')
        """, [("var-list-filter", 5)]),
}

NOT_FOUND = {
    # provenclei/tensorflow_cv p78_GAN_mnist.py: one comprehension makes a
    # step per loss, each for its own group.
    "a GAN's groups, one step per loss in a comprehension": """\
        import tensorflow as tf
        def compute_grads(opt, losses):
            every = tf.trainable_variables()
            vars_disc = [v for v in every if 'disc' in v.name]
            vars_gene = [v for v in every if 'gene' in v.name]
            groups = [vars_disc, vars_disc, vars_gene]
            return [opt.compute_gradients(loss, vs)
                    for vs, loss in zip(groups, losses)]
        """,
    # Salon-sai/learning-tensorflow lesson7/ebgan.py: the helper filters
    # by the prefix it is given; the generator's loss and the
    # discriminator's each train their own half.
    "a GAN's halves, one helper called per loss and prefix": """\
        import tensorflow as tf
        d_loss = tf.reduce_mean(d_out)
        g_loss = tf.reduce_mean(g_out)
        def optimizer(loss, d_or_g):
            optim = tf.train.AdamOptimizer(learning_rate=0.001, beta1=0.5)
            var_list = [v for v in tf.trainable_variables()
                        if v.name.startswith(d_or_g)]
            gradient = optim.compute_gradients(loss, var_list=var_list)
            return optim.apply_gradients(gradient)
        train_g = optimizer(g_loss, 'Loss/Generator')
        train_d = optimizer(d_loss, 'Loss/Discriminator')
        """,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_freeze_beside_a_look_alike_is_found(name):
  text, expected = FOUND[name]
  idioms = {idiom for idiom, _ in expected}
  assert [f for f in in_text(text) if f[0] in idioms] == expected


@pytest.mark.parametrize("name", sorted(NOT_FOUND))
def test_a_look_alike_is_not_reported(name):
  assert in_text(NOT_FOUND[name]) == []
