"""`tfpartial scan`'s `var-list-filter` on lists chosen by a flag, a
configured value or a scope in TF1 fine-tunes (segmentation, detection,
classification): a group emptied under `if args.freeze_x:`, a list
chosen by `a if hp.flag else b`, a scope's list grown under `if
args.train_backbone:`, slim's `--trainable_scopes` given a default, the
subsets and complements split off a filtered list, and a new head's scope
beside a model loaded from a SavedModel. Each source is synthetic, in
the shape of real code (part ten's DeepLab-ResNet, YOLOv3 and CarND
forks); the negatives are the look-alikes that must stay silent."""

import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


_found = scanned.found


POSITIVE = {
    # YOLOv3 pruning: the gammas of the chosen part, collected by a loop
    # over it, get an L1 step joined to the part's own gradients.
    "a subset of a configured part gets its own gradients": ("""\
        update_vars = tf.contrib.framework.get_variables_to_restore(
            include=args.update_part)
        gamma_vars = []
        for item in update_vars:
          if "gamma" in item.name:
            gamma_vars.append(item)
        optimizer = tf.train.MomentumOptimizer(0.01, 0.9)
        grads = optimizer.compute_gradients(loss, var_list=update_vars)
        gamma_grads = optimizer.compute_gradients(loss, var_list=gamma_vars)
        joined = [(0.01 * tf.sign(v), v) for g, v in gamma_grads] + grads
        train_op = optimizer.apply_gradients(joined)
        """, [("var-list-filter", 1)]),
    # DeepLab on codec latents: the new layers, the classifier, and the
    # rest of a list that leaves batch norm out, at three learning rates.
    "the rest of a filtered list beside the groups split off it": ("""\
        def main(loss, lr):
          all_trainable = [v for v in tf.trainable_variables()
                           if 'beta' not in v.name and 'gamma' not in v.name]
          new = [v for v in tf.trainable_variables() if 'adapt' in v.name]
          fc = [v for v in tf.trainable_variables() if 'fc' in v.name]
          rest = [v for v in all_trainable if v not in new and v not in fc]
          grads = tf.gradients(loss, new + fc + rest)
          grads_new = grads[:len(new)]
          grads_fc = grads[len(new):len(new) + len(fc)]
          grads_rest = grads[len(new) + len(fc):]
          return tf.group(
              tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                  zip(grads_new, new)),
              tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                  zip(grads_fc, fc)),
              tf.train.MomentumOptimizer(lr * 0.1, 0.9).apply_gradients(
                  zip(grads_rest, rest)))
        """, [("var-list-filter", 2)]),
    # DeepLab-ResNet with a `--freeze-convolutions` option: the
    # convolutions' group emptied, so only the classifier trains; the
    # batch norm left out every time.
    "a group emptied under a flag beside a filter": ("""\
        def main(args, loss, lr):
          all_trainable = [v for v in tf.trainable_variables()
                           if 'beta' not in v.name and 'gamma' not in v.name]
          fc = [v for v in all_trainable if 'fc' in v.name]
          conv = [v for v in all_trainable if 'fc' not in v.name]
          if args.freeze_convolutions:
            conv = []
          grads = tf.gradients(loss, conv + fc)
          ops = []
          if len(conv) > 0:
            ops.append(tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                zip(grads[:len(conv)], conv)))
          ops.append(tf.train.MomentumOptimizer(lr * 10, 0.9).apply_gradients(
              zip(grads[len(conv):], fc)))
          return tf.group(*ops)
        """, [("var-list-filter", 2), ("var-list-filter", 7)]),
    "a group emptied under a flag, the groups whole otherwise": ("""\
        def main(args, loss, lr):
          fc = [v for v in tf.trainable_variables() if 'fc' in v.name]
          conv = [v for v in tf.trainable_variables() if 'fc' not in v.name]
          if args.freeze_convolutions:
            conv = []
          grads = tf.gradients(loss, conv + fc)
          ops = [tf.train.MomentumOptimizer(lr * 10, 0.9).apply_gradients(
              zip(grads[len(conv):], fc))]
          if conv:
            ops.append(tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                zip(grads[:len(conv)], conv)))
          return tf.group(*ops)
        """, [("var-list-filter", 5)]),
    # Quality estimation: the expert encoder kept fixed by a
    # hyperparameter, the estimator's scope trained alone.
    "a scope's list or every variable, chosen by a hyperparameter": ("""\
        class Model:
          def __init__(self, hp, x, y):
            with tf.variable_scope("encoder"):
              features = encode(x)
            with tf.variable_scope("estimator"):
              logits = tf.layers.dense(features, 1)
            self.loss = tf.reduce_mean(tf.square(y - logits))
            self.params = tf.trainable_variables()
            self.est_params = [v for v in self.params if 'estimator' in v.name]
            params = self.est_params if hp.fixed_exp else self.params
            self.train_op = tf.train.AdamOptimizer(1e-3).minimize(
                self.loss, var_list=params)
        """, [("var-list-filter", 10)]),
    # OpenPose: the backbone's scope added to the head's only when a flag
    # says so.
    "a scope's list grown by another scope under a flag": ("""\
        def main(args, x, y):
          with tf.variable_scope('vgg_19'):
            features = vgg(x)
          with tf.variable_scope('openpose_layers'):
            out = head(features)
          loss = tf.reduce_sum(tf.square(out - y))
          var_list = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                       scope='openpose_layers')
          if args.train_vgg:
            var_list = var_list + tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope='vgg_19')
          return tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=var_list)
        """, [("var-list-filter", 7)]),
    # CarND segmentation: the decoder's scope trained on a VGG loaded
    # from a SavedModel, whose variables are the graph's too.
    "a new head's scope beside a model loaded from a SavedModel": ("""\
        def load_vgg(sess, path):
          tf.saved_model.loader.load(sess, ['vgg16'], path)
          return tf.get_default_graph().get_tensor_by_name('layer7_out:0')

        def layers(features, num_classes):
          with tf.variable_scope('decoder'):
            return tf.layers.conv2d(features, num_classes, 1)

        def optimize(logits, labels, lr):
          decoder_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                           scope='decoder')
          loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
              logits=logits, labels=labels))
          return tf.train.AdamOptimizer(lr).minimize(loss, var_list=decoder_vars)
        """, [("var-list-filter", 10)]),
    # slim's train_image_classifier with `--trainable_scopes` given a
    # default: the freeze is chosen where the flag's default is written.
    "slim's trainable scopes with a default": ("""\
        tf.app.flags.DEFINE_string(
            'trainable_scopes', 'InceptionV3/Logits,InceptionV3/AuxLogits',
            'Comma-separated list of scopes to filter the variables to train.')
        FLAGS = tf.app.flags.FLAGS

        def _get_variables_to_train():
          if FLAGS.trainable_scopes is None:
            return tf.trainable_variables()
          scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
          variables_to_train = []
          for scope in scopes:
            variables_to_train.extend(
                tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
          return variables_to_train

        def main(_):
          variables_to_train = _get_variables_to_train()
          total_loss, grads = model_deploy.optimize_clones(
              clones, optimizer, var_list=variables_to_train)
          return optimizer.apply_gradients(grads)
        """, [("var-list-filter", 2)]),
    # Without a default, the scopes are the command line's: the finding
    # is where the helper keeps them (its call and the step are named).
    "slim's trainable scopes without a default": ("""\
        tf.app.flags.DEFINE_string(
            'trainable_scopes', None,
            'Comma-separated list of scopes to filter the variables to train.')
        FLAGS = tf.app.flags.FLAGS

        def _get_variables_to_train():
          if FLAGS.trainable_scopes is None:
            return tf.trainable_variables()
          scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
          variables_to_train = []
          for scope in scopes:
            variables_to_train.extend(
                tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
          return variables_to_train

        def main(_):
          variables_to_train = _get_variables_to_train()
          total_loss, grads = model_deploy.optimize_clones(
              clones, optimizer, var_list=variables_to_train)
          return optimizer.apply_gradients(grads)
        """, [("var-list-filter", 13)]),
    # Monodepth2: the depth and pose networks each trained when their
    # flag says so, picked from a dict of models by their names.
    "models picked by name from a dict under their flags": ("""\
        class Trainer:
          def __init__(self, opt):
            self.opt = opt
            self.models = {'depth_enc': Encoder(), 'depth_dec': Decoder(),
                           'pose_enc': Encoder(), 'pose_dec': PoseDecoder()}

          def get_trainable_weights(self):
            weights = []
            for m_name, model in self.models.items():
              if self.opt.train_pose and "pose" in m_name:
                weights.extend(model.trainable_weights)
              if self.opt.train_depth and "depth" in m_name:
                weights.extend(model.trainable_weights)
            return weights

          def run_step(self, x):
            weights = self.get_trainable_weights()
            with tf.GradientTape() as tape:
              loss = self.compute_loss(x)
            grads = tape.gradient(loss, weights)
            self.optimizer.apply_gradients(zip(grads, weights))
        """, [("var-list-filter", 11)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_list_chosen_by_a_flag_is_found(name):
  text, expected = POSITIVE[name]
  assert _found(text) == expected


NEGATIVE = {
    # A GAN: one half or the other, by the phase; each trains.
    "one of two halves chosen by a phase": """\
        def build(phase, x):
          with tf.variable_scope('generator'):
            fake = generate(x)
          with tf.variable_scope('discriminator'):
            score = discriminate(fake)
          g_vars = [v for v in tf.trainable_variables() if 'generator' in v.name]
          d_vars = [v for v in tf.trainable_variables()
                    if 'discriminator' in v.name]
          params = g_vars if phase == 'g' else d_vars
          return tf.train.AdamOptimizer(1e-4).minimize(
              tf.reduce_mean(score), var_list=params)
        """,
    # A list emptied under a flag that no step trains (weight decay's).
    "a decay list emptied under a flag": """\
        def main(args, loss):
          decay_vars = [v for v in tf.trainable_variables() if 'kernel' in v.name]
          if args.no_decay:
            decay_vars = []
          loss += 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in decay_vars] + [0.0])
          return tf.train.AdamOptimizer(1e-3).minimize(loss)
        """,
    # The whole model under one scope, grown under a flag by a scope
    # inside it (no variable left out either way).
    "a model's scope with its own part added under a flag": """\
        def main(args, x, y):
          with tf.variable_scope('model'):
            out = net(x)
          loss = tf.reduce_sum(tf.square(out - y))
          var_list = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                       scope='model')
          if args.extra:
            var_list = var_list + tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope='model/extra')
          return tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=var_list)
        """,
    # A SavedModel loaded by another file (evaluation); the training
    # file builds its whole model under its scope.
    "a model's scope where another file loads a SavedModel": """\
        def build(x, y):
          with tf.variable_scope('model'):
            out = tf.layers.dense(x, 1)
          model_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                         scope='model')
          loss = tf.reduce_mean(tf.square(out - y))
          return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=model_vars)
        """,
    # An experiment switched off where it is written: never run.
    "a step under a switch that is only ever False": """\
        a = False
        if a:
          out = tf.layers.dense(x, 1)
          head = [v for v in tf.trainable_variables() if 'dense' in v.name]
          loss = tf.reduce_mean(tf.square(out - y))
          op = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
        """,
    # Every model, or none, by one flag: no name chooses.
    "every model of a dict under one flag": """\
        class Trainer:
          def get_trainable_weights(self):
            weights = []
            for m_name, model in self.models.items():
              if self.opt.train:
                weights.extend(model.trainable_weights)
            return weights

          def run_step(self, x):
            weights = self.get_trainable_weights()
            with tf.GradientTape() as tape:
              loss = self.compute_loss(x)
            grads = tape.gradient(loss, weights)
            self.optimizer.apply_gradients(zip(grads, weights))
        """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_choice_that_leaves_nothing_out_is_silent(name):
  assert _found(NEGATIVE[name]) == []


@pytest.mark.parametrize("name, said", [
    ("slim's trainable scopes with a default",
     "none: the flag's default `InceptionV3/Logits,InceptionV3/AuxLogits` "
     "chooses the scopes that train"),
    ("a scope's list or every variable, chosen by a hyperparameter",
     "none: chosen by `hp.fixed_exp`; the filtered side leaves"),
    ("a group emptied under a flag, the groups whole otherwise",
     "none: the group is emptied under a flag; with it set"),
])
def test_a_flag_s_choice_is_said(name, said):
  text, _ = POSITIVE[name]
  findings, _ = _scan.scan_project(
      [_files.Source("t.py", textwrap.dedent(text))])
  assert said in findings[-1].drift
