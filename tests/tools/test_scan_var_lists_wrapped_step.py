"""`tfpartial scan`'s `var-list-filter` message when the step is inside a
function of the project that takes the list as a parameter
(`create_decoder_only_optimizer(lr, trainable_vars, loss)` calling
`optimizer.compute_gradients(loss, var_list=trainable_vars)`): the
message names that step's own line, then the function and the line that
calls it, so a reader (and `measure.py --span`) finds the step; a step in
another file keeps the call's line only."""

import re
import textwrap

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_PHASENET = textwrap.dedent("""\
    import tensorflow as tf

    def freeze_encoder_layers():
      trainable_vars = []
      for var in tf.compat.v1.global_variables():
        if 'DownConv_' in var.name:
          continue
        trainable_vars.append(var)
      return trainable_vars

    def create_decoder_only_optimizer(learning_rate, trainable_vars, loss):
      optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
      pairs = optimizer.compute_gradients(loss, var_list=trainable_vars)
      return optimizer.apply_gradients(pairs)

    def main():
      model = Model()
      trainable_vars = freeze_encoder_layers()
      train_op = create_decoder_only_optimizer(0.01, trainable_vars,
                                               model.loss)
      sess.run(train_op)
    """)


def test_the_message_names_the_step_inside_the_function_it_calls():
  [finding] = _scan.scan_text("t.py", _PHASENET)
  assert finding.line == 8
  assert finding.message.startswith(
      "`var_list` filtered by name or scope for `compute_gradients` "
      "(line 13) in `create_decoder_only_optimizer`, called at line 19, "
      "returned by `freeze_encoder_layers()` (line 18): ")
  assert re.findall(r"\(line (\d+)\)", finding.message) == ["13", "18"]


def test_a_step_in_another_file_keeps_the_line_of_the_call():
  sources = [_files.Source(path, textwrap.dedent(text)) for path, text in {
      "opt.py": """\
          import tensorflow as tf

          def create_decoder_only_optimizer(learning_rate, trainable_vars,
                                            loss):
            optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
            pairs = optimizer.compute_gradients(loss, var_list=trainable_vars)
            return optimizer.apply_gradients(pairs)
          """,
      "train.py": """\
          import tensorflow as tf
          from opt import create_decoder_only_optimizer

          def freeze_encoder_layers():
            trainable_vars = []
            for var in tf.compat.v1.global_variables():
              if 'DownConv_' in var.name:
                continue
              trainable_vars.append(var)
            return trainable_vars

          def main():
            model = Model()
            trainable_vars = freeze_encoder_layers()
            train_op = create_decoder_only_optimizer(0.01, trainable_vars,
                                                     model.loss)
            sess.run(train_op)
          """}.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors
  assert [(f.path, f.line) for f in findings] == [("train.py", 9)]
  assert findings[0].message.startswith(
      "`var_list` filtered by name or scope for "
      "`create_decoder_only_optimizer` (line 15), returned by "
      "`freeze_encoder_layers()` (line 14): ")
