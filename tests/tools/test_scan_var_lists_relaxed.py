"""`tfpartial scan`'s `var-list-filter` where a gate kept it silent on
real code it had not seen (found by leaving part fourteen out): a step
over one scope of a model whose other scopes the module warm-starts from
a checkpoint (`tf.train.init_from_checkpoint(ckpt, {'resnet/':
'resnet/'})`, the Estimator's way to fine-tune a head on a restored
backbone). The look-alikes stay silent: no restore, a restore of the
scope the step trains (resuming it), a restore through a list whose
names are not written out. And a step whose filter leaves variables
out by their names beside another function's step over every variable
of the graph (two ways to fine-tune, not a model's two halves); the
look-alikes stay silent: a filter by slice beside it (a library's
layer-wise pretraining beside its other model), another function's
step over an object's own list (the other half). Synthetic sources in
the shape of real code."""

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

_TWO_WAYS = """\
    def create_optimizer(loss, lr):
        optimizer = tf.train.AdamOptimizer(lr)
        tvars = {whole}
        grads = tf.gradients(loss, tvars)
        return optimizer.apply_gradients(zip(grads, tvars))


    def create_head_optimizer(loss, lr):
        optimizer = tf.train.AdamOptimizer(lr)
        tvars = tf.trainable_variables()
        kept = {kept}
        grads = tf.gradients(loss, kept)
        return optimizer.apply_gradients(zip(grads, kept))
    """

_BY_NAME = "[v for v in tvars if 'bert' not in v.name]"

POSITIVE = {
    "by_name_beside_every_variable": (_TWO_WAYS.format(
        whole="tf.trainable_variables()", kept=_BY_NAME), 11),
    "by_prefix_beside_every_variable": (_TWO_WAYS.format(
        whole="tf.compat.v1.trainable_variables()",
        kept="[v for v in tvars if v.name.startswith('head')]"), 11),
    "head_on_a_warm_started_backbone": (_WARM_STARTED.format(
        restore="tf.train.init_from_checkpoint(checkpoint, "
        "{'resnet/': 'resnet/'})"), 9),
    "head_on_a_backbone_assigned_by_scope": (_WARM_STARTED.format(
        restore="init_fn = slim.assign_from_checkpoint_fn(checkpoint, "
        "slim.get_variables_to_restore(include=['resnet']))"), 9),
}

NEGATIVE = {
    "by_slice_beside_every_variable": _TWO_WAYS.format(
        whole="tf.trainable_variables()", kept="tvars[-4:]"),
    "by_name_beside_an_objects_list": _TWO_WAYS.format(
        whole="critic.trainable_variables()", kept=_BY_NAME),
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
