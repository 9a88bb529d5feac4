"""A constraint given as a bound method (`constraint=self.Wconstraint`,
part 23's equation_learner) or as a function's name
(`kernel_constraint=keep_mask`) is judged by its body, as a
`*Constraint` class's `__call__` is: a product of the weight by a value
fixed when it was made re-masks the weight. One that clips, normalises or
scales by a number stays silent."""

import pytest

import scanned

_found = scanned.found

_METHOD = '''
import tensorflow as tf


class Connected(tf.keras.layers.Layer):
  def __init__(self, units, scale=0.5):
    super().__init__()
    self.units = units
    self.scale = scale

  def Wconstraint(self, w):
    {body}

  def build(self, input_shape):
    self.W = self.add_weight(name="kernel",
                             shape=(int(input_shape[1]), self.units),
                             constraint=self.Wconstraint, trainable=True)
    self.Wtrimmer = tf.Variable(tf.ones_like(self.W), trainable=False)

  def call(self, x):
    return tf.matmul(x, self.W)
'''

_FUNCTION = '''
import numpy as np
import tensorflow as tf

MASK = np.load("keep.npy")


def keep_mask(w):
  {body}


layer = tf.keras.layers.Dense(10, kernel_constraint=keep_mask)
model = tf.keras.Sequential([layer])
model.compile("adam", "mse")
model.fit(np.zeros((4, 3)), np.zeros((4, 10)))
'''


def _method(body):
  return _METHOD.replace("{body}", body)


def _function(body):
  return _FUNCTION.replace("{body}", body)


CASES = [
    pytest.param(_method("return w * self.Wtrimmer"),
                 [("weight-remask", 12)], id="method_times_trimmer"),
    pytest.param(_method("return tf.multiply(self.Wtrimmer, w)"),
                 [("weight-remask", 12)], id="method_multiply_trimmer"),
    pytest.param(_method("return tf.clip_by_norm(w, 1.0)"), [],
                 id="method_clips"),
    pytest.param(_method("return w / tf.norm(w)"), [],
                 id="method_normalises"),
    pytest.param(_method("return w * self.scale"), [],
                 id="method_scales_by_number"),
    pytest.param(_method("return w * tf.cast(w > 0, w.dtype)"), [],
                 id="method_projects"),
    pytest.param(_function("return w * MASK"), [("weight-remask", 9)],
                 id="function_times_mask"),
    pytest.param(_function("return tf.clip_by_value(w, -1.0, 1.0)"), [],
                 id="function_clips"),
    pytest.param(_function("return w * 0.5"), [], id="function_scales"),
]


@pytest.mark.parametrize("source, expected", CASES)
def test_remask_constraint_method(source, expected):
  assert _found(source) == expected


def test_function_named_in_another_module():
  files = {
      "masks.py": '''
          import numpy as np

          MASK = np.load("keep.npy")


          def keep_mask(w):
            return w * MASK
          ''',
      "train.py": '''
          import numpy as np
          import tensorflow as tf
          from masks import keep_mask

          layer = tf.keras.layers.Dense(10, kernel_constraint=keep_mask)
          model = tf.keras.Sequential([layer])
          model.compile("adam", "mse")
          model.fit(np.zeros((4, 3)), np.zeros((4, 10)))
          ''',
  }
  assert scanned.in_project(files) == [("weight-remask", "masks.py", 8)]
