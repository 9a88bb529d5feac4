"""Child process for test_distribute.py: ParameterServerStrategy in-process.

A worker and a parameter server as in-process gRPC servers on loopback
(`tf.distribute.Server`), a `ClusterCoordinator` scheduling the steps.
"""

import json
import os
import socket
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import tfpartial  # pylint: disable=g-import-not-at-top


def _port():
  with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    return sock.getsockname()[1]


cluster = tf.train.ClusterSpec({"worker": [f"127.0.0.1:{_port()}"],
                                "ps": [f"127.0.0.1:{_port()}"]})
servers = [tf.distribute.Server(cluster, job_name=job, task_index=0,
                                protocol="grpc", start=True)
           for job in ("worker", "ps")]
strategy = tf.distribute.experimental.ParameterServerStrategy(
    tf.distribute.cluster_resolver.SimpleClusterResolver(cluster,
                                                         rpc_layer="grpc"))
coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
    strategy)
X0 = np.linspace(-1.0, 1.3, 12).astype(np.float32).reshape(3, 4)
FROZEN = np.zeros((3, 4), bool)
FROZEN[0] = True
results = {}
for name, make in (("adamw", lambda: keras.optimizers.AdamW(0.1, 0.3)),
                   ("ftrl", lambda: keras.optimizers.Ftrl(
                       0.1, l1_regularization_strength=0.05))):
  with strategy.scope():
    x = tf.Variable(X0, name="x")
    optimizer = make()
    optimizer.build([x])
  spec = tfpartial.freeze(x, FROZEN)

  @tf.function
  def step():
    def replica():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(x - 3.0))
      grad = tf.where(FROZEN, np.nan, tape.gradient(loss, x))
      spec.apply_gradients(optimizer, [(grad, x)])
    strategy.run(replica)

  for _ in range(3):
    coordinator.schedule(step)
  coordinator.join()
  value = x.numpy()
  results[name] = {
      "frozen_held": bool(np.array_equal(value[FROZEN].view(np.uint32),
                                         X0[FROZEN].view(np.uint32))),
      "trained": bool((value[~FROZEN] != X0[~FROZEN]).all())}
with open(sys.argv[1], "w") as out:
  json.dump(results, out)
