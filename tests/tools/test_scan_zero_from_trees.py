"""A factor the project sets to 0 is read from the files' trees, not from
their text: a 0 in a comment or a string sets nothing, and an option's
default on a line of its own is still its default."""

import scanned

_STEP = '''
import tensorflow as tf
from config import Config

def train_op(loss, global_step):
  opt = tf.train.MomentumOptimizer(0.01, 0.9)
  pairs = []
  for grad, var in opt.compute_gradients(loss):
    if 'resnet' in var.op.name:
      grad = tf.multiply(grad, Config.BACKBONE_GRAD_SCALE)
    pairs.append((grad, var))
  return opt.apply_gradients(pairs, global_step=global_step)
'''


def test_a_zero_in_a_comment_sets_nothing():
  config = '''
class Config:
  BACKBONE_GRAD_SCALE = 0.5  # BACKBONE_GRAD_SCALE = 0.0 would freeze it.
'''
  assert scanned.in_project({"config.py": config, "step.py": _STEP}) == []


def test_a_zero_in_a_string_sets_nothing():
  config = '''
class Config:
  """Set BACKBONE_GRAD_SCALE == 0 to freeze the backbone."""
  BACKBONE_GRAD_SCALE = 0.5
'''
  assert scanned.in_project({"config.py": config, "step.py": _STEP}) == []


def test_an_option_s_default_on_a_line_of_its_own():
  config = '''
import argparse

parser = argparse.ArgumentParser()
parser.add_argument(
    '--backbone_grad_scale', type=float,
    default=0.0)
args = parser.parse_args()
'''
  step = _STEP.replace("from config import Config",
                       "from config import args").replace(
                           "Config.BACKBONE_GRAD_SCALE",
                           "args.backbone_grad_scale")
  assert ("grads-mask", "step.py", 10) in scanned.in_project(
      {"config.py": config, "step.py": step})


def test_a_zero_set_in_code_still_counts():
  config = '''
class Config:
  BACKBONE_GRAD_SCALE: float = 0.0
'''
  assert ("grads-mask", "step.py", 10) in scanned.in_project(
      {"config.py": config, "step.py": _STEP})
