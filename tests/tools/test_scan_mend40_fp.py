"""Mend forty-d: cases a review of round thirty-four's false-positive
silences showed hidden (a real freeze the scanner stopped reporting).
Each source is synthetic and each is found at the line of the freeze."""

import pytest

import scanned
import test_scan_fp_data_scopes

# Three scopes and two of their collections (the rest cases).
_ENC_DEC_LAST = """\
    import tensorflow as tf

    with tf.variable_scope('enc'):
        h = tf.layers.dense(x, 64)
    with tf.variable_scope('dec'):
        h = tf.layers.dense(h, 64)
    with tf.variable_scope('last'):
        logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.square(logits - y))
    last_var = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='last')
    enc_var = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='enc')
"""

# A Keras constraint keeping a stored mask, whose __call__ is KEEP.
_PRUNED = """\
    from keras import backend as K
    from keras.constraints import Constraint
    from keras.layers import Dense
    import masks_cfg


    class Pruned(Constraint):

        def __init__(self, mask=None):
            self.mask = mask

        def __call__(self, w):
{keep}

    layer = Dense(10, kernel_constraint=Pruned(mask=m))
"""


def _pruned(keep):
  return _PRUNED.format(keep=keep)


_SOURCES = {
    "a_hand_made_model_by_a_variable_helper": ("""\
    import tensorflow as tf


    def weight_variable(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


    def model(x):
        with tf.variable_scope("backbone"):
            w1 = weight_variable([3, 3, 3, 32])
            h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], 'SAME'))
        with tf.variable_scope("head"):
            w2 = weight_variable([3, 3, 32, 10])
            logits = tf.nn.conv2d(h, w2, [1, 1, 1, 1], 'SAME')
        return logits


    logits = model(x)
    loss = tf.reduce_mean(tf.square(logits - y))
    head_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head_vars)
""", [("var-list-filter", 20)]),
    "a_hand_made_model_by_a_get_variable_helper": ("""\
    import tensorflow as tf


    def weight_variable(shape):
        return tf.get_variable("w", shape)


    def unused(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


    def model(x):
        with tf.variable_scope("backbone"):
            w1 = weight_variable([3, 3, 3, 32])
            h = tf.nn.relu(tf.nn.conv2d(x, w1, [1, 1, 1, 1], 'SAME'))
        with tf.variable_scope("head"):
            w2 = weight_variable([3, 3, 32, 10])
            logits = tf.nn.conv2d(h, w2, [1, 1, 1, 1], 'SAME')
        return logits


    logits = model(x)
    loss = tf.reduce_mean(tf.square(logits - y))
    head_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head_vars)
""", [("var-list-filter", 24)]),
    "a_constraint_whose_sign_is_joined_by_augmented_mask": (_pruned("""\
            keep = K.cast(K.abs(w) >= 0., K.floatx())
            keep *= self.mask
            return w * keep
"""), [("weight-remask", 15)]),
    "a_constraint_keeping_rows_by_index": (_pruned("""\
            rows = K.arange(0, K.shape(w)[0])
            keep = K.cast(K.expand_dims(rows >= 10, 1), K.floatx())
            return w * keep
"""), [("weight-remask", 15)]),
    "a_constraint_joined_with_a_module_mask": (_pruned("""\
            keep = K.cast(K.abs(w) >= 0., K.floatx()) * masks_cfg.MASK
            return w * keep
"""), [("weight-remask", 14)]),
    "a_constraint_with_a_literal_threshold": (_pruned("""\
            keep = K.cast(K.abs(w) > 0.01, K.floatx())
            return w * keep
"""), [("weight-remask", 14)]),
    "a_constraint_by_a_helper_mask": ("""\
    from keras import backend as K
    from keras.constraints import Constraint
    from keras.layers import Dense
    from pruning import mask_of


    class Pruned(Constraint):

        def __call__(self, w):
            keep = mask_of(w)
            return w * keep


    layer = Dense(10, kernel_constraint=Pruned())
""", [("weight-remask", 11)]),
    "a_rest_taken_from_one_scope_only": (_ENC_DEC_LAST + """\
    other_var = list(set(enc_var) - set(last_var))
    optimizer1 = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, var_list=other_var)
    optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(loss, var_list=last_var)
    optimizer = tf.group(optimizer1, optimizer2)
    for _ in range(100):
        sess.run(optimizer)
""", [("var-list-filter", 10)]),
    "a_rest_step_with_rate_zero": (_ENC_DEC_LAST + """\
    other_var = list(set(tf.global_variables()) - set(last_var))
    optimizer1 = tf.train.GradientDescentOptimizer(0.0).minimize(loss, var_list=other_var)
    optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(loss, var_list=last_var)
    optimizer = tf.group(optimizer1, optimizer2)
    for _ in range(100):
        sess.run(optimizer)
""", [("var-list-filter", 10)]),
    "a_group_not_what_the_flag_runs": (_ENC_DEC_LAST + """\
    other_var = list(set(tf.global_variables()) - set(last_var))
    optimizer1 = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, var_list=other_var)
    optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(loss, var_list=last_var)
    optimizer = tf.group(optimizer1, optimizer2)
    train = optimizer2 if FLAGS.head_only else optimizer
    for _ in range(100):
        sess.run(train)
""", [("var-list-filter", 10)]),
    "a_variable_a_wrapped_step_makes_zeroes_and_trains": ("""\
    import tensorflow as tf


    def step(x, y):
        kernel = tf.Variable(tf.ones([8, 8]))
        kernel.scatter_nd_update([[0], [3]], tf.zeros([2, 8]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, kernel) - y))
        grads = tape.gradient(loss, [kernel])
        opt.apply_gradients(zip(grads, [kernel]))
        return loss


    step = tf.function(step)
    for _ in range(100):
        step(x, y)
""", [("weight-remask", 6)]),
    "a_current_scope_plus_decoder_is_the_decoder": ("""\
    import tensorflow as tf


    class AE(object):

        def __init__(self, x):
            current_scope = tf.get_variable_scope().name + '/decoder'
            with tf.variable_scope('encoder'):
                z = tf.layers.dense(x, 8)
            with tf.variable_scope('decoder'):
                self.out = tf.layers.dense(z, 8)
            loss = tf.reduce_mean(tf.square(self.out - x))
            dec = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=current_scope)
            self.para_list = []
            for i in dec:
                if 'bn' in i.name:
                    pass
                else:
                    self.para_list.append(i)
            self.train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=self.para_list)
""", [("var-list-filter", 13)]),
    "a_rest_comprehended_from_one_scope_only": (_ENC_DEC_LAST + """\
    other_var = [v for v in enc_var if v not in last_var]
    optimizer1 = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, var_list=other_var)
    optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(loss, var_list=last_var)
    optimizer = tf.group(optimizer1, optimizer2)
    for _ in range(100):
        sess.run([optimizer1, optimizer2])
""", [("var-list-filter", 10)]),
    "the_rest_of_every_variable_grouped_and_run_is_silent": (_ENC_DEC_LAST + """\
    other_var = list(set(tf.global_variables()) - set(last_var))
    optimizer1 = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, var_list=other_var)
    optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(loss, var_list=last_var)
    optimizer = tf.group(optimizer1, optimizer2)
    for _ in range(100):
        sess.run(optimizer)
""", []),
    "a_kernel_reshaped_in_the_scope_from_a_parameter_is_silent": (
        test_scan_fp_data_scopes._TWO_PARTS.replace(
            "            blur_r = tf.nn.conv2d(image, psfs,",
            "            kernel = tf.reshape(tf.transpose(psfs), [15, 1, 1, 1])\n"
            "            blur_r = tf.nn.conv2d(image, kernel,"), []),
    "the_rest_grouped_and_returned_for_the_caller_is_silent": ("""\
    import tensorflow as tf

    def network(x, y, lr):
        logits = tf.layers.dense(tf.layers.dense(x, 64, name='body'), 10,
                                 name='last')
        tf.add_to_collection('UNPRETRAIN_LAST', logits)
        loss = -tf.reduce_mean(y * tf.log(tf.nn.softmax(logits) + 1e-10))
        last_var = tf.get_collection('UNPRETRAIN_LAST')
        other_var = list(set(tf.global_variables()) - set(last_var))
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            optimizer1 = tf.train.MomentumOptimizer(lr, 0.9).minimize(
                loss, var_list=other_var)
            optimizer2 = tf.train.MomentumOptimizer(lr * 10, 0.9).minimize(
                loss, var_list=last_var)
            optimizer = tf.group(optimizer1, optimizer2)
        return loss, optimizer


    loss, optimizer = network(x, y, lr)
    for _ in range(100):
        sess.run(optimizer)
    """, []),
}


@pytest.mark.parametrize("name", sorted(_SOURCES))
def test_a_hidden_freeze_is_found_again_and_its_guard_stays(name):
  text, expected = _SOURCES[name]
  assert scanned.found(text) == expected
