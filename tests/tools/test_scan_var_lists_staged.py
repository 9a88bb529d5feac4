"""`tfpartial scan`'s `var-list-filter` on models trained in stages, or
fine-tuned on top of a restored part: one run's step trains only the new
stage while the earlier stage, in the forward path, gets no update. What
the code does tells a stage from a GAN's halves: a GAN's two steps run
together and each loss reads the other half; a stage's steps sit in
exclusive branches of a mode (`if mode == "train1": ... elif mode ==
"train2": ...`), or are fetched by different methods (`train_stage1`,
`train_stage2`), and the earlier stage's output feeds the later one.
Also: a filter written with slim's `get_variables_to_restore(include=)`
kept by `set(...).intersection(...)`, and a model made by a class of a
module imported by name (`aams.AAMS()`). Each source is synthetic, in
the shape of real code (part ten's cross_vc, stackGAN, pix2pixHD, AAMS,
LearningToSpotArtifacts)."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _found(files):
  if isinstance(files, str):
    files = {"t.py": files}
  sources = [_files.Source(path, textwrap.dedent(text))
             for path, text in files.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.path, f.idiom, f.line) for f in findings]


POSITIVE = {
    # slim's include filter, kept by a set's intersection with the
    # trainable collection: only the top convolutions train.
    "an include filter kept by a set's intersection": ({"t.py": """\
        class Trainer:
          def variables_to_train(self, n):
            chosen = []
            for i in range(n):
              vs = slim.get_variables_to_restore(
                  include=['disc/conv_{}'.format(5 - i)])
              vs = list(set(vs).intersection(tf.trainable_variables()))
              chosen += vs
            return chosen

          def tower(self, opt, loss):
            grads = opt.compute_gradients(loss, self.variables_to_train(2))
            return opt.apply_gradients(grads)
        """}, [("t.py", "var-list-filter", 5)]),
    # A model made by a class of a module imported by name; its method
    # takes the list a loop over literal scopes collects.
    "a method of a model made as module.Class()": ({
        "net/__init__.py": "",
        "net/model.py": """\
            class Model(object):
              def training_op(self, step, variables=tf.trainable_variables()):
                opt = tf.train.AdamOptimizer(1e-3)
                pairs = opt.compute_gradients(self.loss, var_list=variables)
                return opt.apply_gradients(pairs, global_step=step)
            """,
        "train.py": """\
            from net import model as m

            if __name__ == "__main__":
              net = m.Model()
              chosen = []
              for scope in ['attention', 'decoder']:
                chosen.extend(tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, scope))
              op = net.training_op(step, chosen)
            """}, [("train.py", "var-list-filter", 7)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_stage_trained_alone_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected
