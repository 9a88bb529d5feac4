"""Slim-style fine-tuning: `--trainable_scopes`, plus a freeze inside one variable.

The TF1 pattern (tf-slim's train_image_classifier.py): restore a pretrained
network, train only the variables under `--trainable_scopes` by filtering
`var_list`. Here the classifier grows from 3 pretrained classes to 5, and
the pretrained class columns of `logits/weights` must stay as they are
while the 2 new columns train. `var_list` cannot say "part of a variable";
the port keeps the filtering and adds one spec.

Run: python legacy_examples/slim_finetune_scopes.py [--steps N] [--eager]
"""

import argparse

import numpy as np
import tensorflow as tf

import tfpartial

OLD_CLASSES, NEW_CLASSES, FEATURES = 3, 5, 4
RNG = np.random.default_rng(0)
PRETRAINED = {
    "features/weights": RNG.normal(size=(6, FEATURES)).astype(np.float32),
    "logits/weights": RNG.normal(size=(FEATURES, OLD_CLASSES)).astype(
        np.float32),
}
INPUTS = RNG.normal(size=(32, 6)).astype(np.float32)
LABELS = RNG.integers(0, NEW_CLASSES, 32)
# The logits layer widened with 2 fresh class columns.
LOGITS0 = np.concatenate(
    [PRETRAINED["logits/weights"],
     RNG.normal(size=(FEATURES, NEW_CLASSES - OLD_CLASSES)).astype(
         np.float32)], axis=1)


def build_variables(v1):
  """The network, restored from the pretrained values."""
  with v1.variable_scope("features"):
    features = v1.get_variable("weights", initializer=PRETRAINED[
        "features/weights"])
  with v1.variable_scope("logits"):
    logits = v1.get_variable("weights", initializer=LOGITS0)
  return features, logits


def loss_fn(features, logits):
  hidden = tf.nn.relu(tf.matmul(INPUTS, features))
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=LABELS, logits=tf.matmul(hidden, logits)))


def trainable_in(scopes, variables):
  """slim's --trainable_scopes: the variables under any of the scopes."""
  return [v for v in variables
          if any(v.name.startswith(scope + "/") for scope in scopes)]


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=50)
  parser.add_argument("--eager", action="store_true",
                      help="run the same port as TF2 eager code")
  args = parser.parse_args()
  v1 = tf.compat.v1
  if not args.eager:
    v1.disable_v2_behavior()
  features, logits = build_variables(v1)
  var_list = trainable_in(["logits"], [features, logits])  # --trainable_scopes
  # The one added line: the pretrained class columns stay fixed.
  spec = tfpartial.freeze(logits, np.s_[:, :OLD_CLASSES])
  optimizer = v1.train.MomentumOptimizer(0.1, momentum=0.9)
  if args.eager:
    for _ in range(args.steps):
      spec.minimize(optimizer, lambda: loss_fn(features, logits),
                    var_list=var_list)
    values = {"features": features.numpy(), "logits": logits.numpy()}
  else:
    # Was: train_op = optimizer.minimize(loss, var_list=var_list)
    train_op = spec.minimize(optimizer, loss_fn(features, logits),
                             var_list=var_list)
    with v1.Session() as session:
      session.run(v1.global_variables_initializer())
      for _ in range(args.steps):
        session.run(train_op)
      values = session.run({"features": features, "logits": logits})
  held = lambda a, b: np.array_equal(a.view(np.uint32), b.view(np.uint32))
  print(f"features/weights unchanged (not in --trainable_scopes): "
        f"{held(values['features'], PRETRAINED['features/weights'])}")
  print(f"logits pretrained columns unchanged: "
        f"{held(values['logits'][:, :OLD_CLASSES], PRETRAINED['logits/weights'])}")
  moved = (values["logits"][:, OLD_CLASSES:] != LOGITS0[:, OLD_CLASSES:]).all()
  print(f"logits new columns trained: {moved}")


if __name__ == "__main__":
  main()
