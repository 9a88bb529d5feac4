"""`tfpartial scan`'s `var-list-filter` where a step trains a list and
another step of the same loss trains what is left of all the variables
(part thirty-four's weak-supervision segmenter: `other_var =
list(set(tf.global_variables()) - set(last_var))`, each minimised at its
own learning rate, the two ops grouped by `tf.group`): between them the
steps train every variable at every step. The list's step run alone
keeps the rest fixed. Each source is synthetic."""

import scanned

_GROUPED = """\
    import tensorflow as tf

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
    for _ in range(100):
        sess.run(optimizer)
    """


def test_a_list_and_the_rest_grouped_is_silent():
  assert scanned.found(_GROUPED) == []


def test_the_head_alone_run_is_found():
  text = _GROUPED.replace("optimizer = tf.group(optimizer1, optimizer2)",
                          "optimizer = tf.group(optimizer2)")
  assert scanned.found(text) == [("var-list-filter", 7)]
