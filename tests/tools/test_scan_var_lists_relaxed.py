"""`tfpartial scan`'s `var-list-filter` where a gate kept it silent on
real code it had not seen (found by leaving part fourteen out): a step
over one scope of a model whose other scopes the module warm-starts from
a checkpoint (`tf.train.init_from_checkpoint(ckpt, {'resnet/':
'resnet/'})`, the Estimator's way to fine-tune a head on a restored
backbone). The look-alikes stay silent: no restore, a restore of the
scope the step trains (resuming it), a restore through a list whose
names are not written out. Synthetic sources in the shape of real code."""

import pytest

import scanned

_found = scanned.found

_WARM_STARTED = """\
    def model_fn(features, labels, checkpoint):
        with tf.variable_scope('resnet'):
            logits = resnet(features)
        with tf.variable_scope('head'):
            w = tf.get_variable('w', [10, 10])
        logits = tf.matmul(logits, w)
        loss = tf.losses.softmax_cross_entropy(labels, logits)
        {restore}
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='head')
        return tf.train.AdamOptimizer(0.1).minimize(loss, var_list=head)
    """

POSITIVE = {
    "head_on_a_warm_started_backbone": (_WARM_STARTED.format(
        restore="tf.train.init_from_checkpoint(checkpoint, "
        "{'resnet/': 'resnet/'})"), 9),
    "head_on_a_backbone_assigned_by_scope": (_WARM_STARTED.format(
        restore="init_fn = slim.assign_from_checkpoint_fn(checkpoint, "
        "slim.get_variables_to_restore(include=['resnet']))"), 9),
}

NEGATIVE = {
    "nothing_restored": _WARM_STARTED.format(restore="pass"),
    "the_trained_scope_resumed": _WARM_STARTED.format(
        restore="tf.train.init_from_checkpoint(checkpoint, "
        "{'head/': 'head/'})"),
    "restored_by_a_list": _WARM_STARTED.format(
        restore="tf.train.init_from_checkpoint(checkpoint, assignment_map)"),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_list_leaving_out_a_restored_part(name):
  text, line = POSITIVE[name]
  assert _found(text) == [("var-list-filter", line)]


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
