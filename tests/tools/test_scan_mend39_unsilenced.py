"""`tfpartial scan` finds the partial freezes that part thirty-three's
four silencers hid (review rd-f53: federated averaging, moving
statistics joined to every trainable variable, a worker's gradients
applied to another copy's list; all four removed). Each program keeps a
part from training and must be found.

- A server whose last entry is put back, after the clients' average,
  from its weights read before the round (fed1), or whose last two
  entries are put back in a second loop (fed3); clients whose head is
  set back to their first head each round (fed4, FedPer by hand).
- A worker's gradients over its local head applied to the server's head,
  a filter of the server's copy by name: the server's body never trains
  (a3c2).
- Every trainable variable with the moving statistics added, then cut
  down by a helper that removes the frozen ones (je3)."""

import pytest
import scanned


# A server averaging its clients each round, entries put back (PUT_BACK)
# from its weights read at the round's start (SAVED).
_FEDERATE = """\
    import tensorflow as tf

    def federate(server, clients, data, rounds):
      w_global = server.get_weights()
      w_locals = [0] * len(clients)
      for r in range(rounds):
        SAVED = server.get_weights()
        for j, client in enumerate(clients):
          client.set_weights(w_global)
          client.fit(data[j])
          w_locals[j] = client.get_weights()
        for k in range(len(w_global)):
          w_global[k] = sum(w[k] for w in w_locals) / len(w_locals)
        PUT_BACK
        server.set_weights(w_global)
    """

_FED1 = _FEDERATE.replace("SAVED", "head").replace(
    "PUT_BACK", "w_global[-1] = head[-1]")

_FED3 = _FEDERATE.replace("SAVED", "old").replace(
    "PUT_BACK", "for k in range(len(w_global) - 2, len(w_global)):\n"
    "          w_global[k] = old[k]")

_FED4 = """\
    import tensorflow as tf

    def federate(server, clients, data, rounds):
      w_global = server.get_weights()
      w_locals = [0] * len(clients)
      heads = [c.get_weights()[-1] for c in clients]
      for r in range(rounds):
        for j, client in enumerate(clients):
          w_global[-1] = heads[j]
          client.set_weights(w_global)
          client.fit(data[j])
          w_locals[j] = client.get_weights()
        for k in range(len(w_global)):
          w_global[k] = sum(w[k] for w in w_locals) / len(w_locals)
        server.set_weights(w_global)
    """

_A3C2 = """\
    import tensorflow as tf

    class Server(object):
      def __init__(self):
        with tf.variable_scope("global"):
          build()
        self.opt = tf.train.RMSPropOptimizer(1e-3)
        self.head = [v for v in tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, "global") if "head" in v.name]

    class Worker(object):
      def __init__(self, name, server):
        with tf.variable_scope(name):
          self.loss = build()
        self.local_head = [v for v in tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope=name) if "head" in v.name]
        self.grads = tf.gradients(self.loss, self.local_head)
        self.apply = server.opt.apply_gradients(zip(self.grads, server.head))

    def build():
      x = tf.placeholder(tf.float32, [None, 4])
      h = tf.layers.dense(x, 8, name="body")
      return tf.reduce_mean(tf.layers.dense(h, 1, name="head"))
    """

_JE3 = """\
    import tensorflow as tf

    def drop_frozen(vs, frozen):
      for v in list(vs):
        if any(f in v.name for f in frozen):
          vs.remove(v)

    def build(loss, frozen):
      every = tf.trainable_variables()
      bn = [g for g in tf.global_variables() if "moving" in g.name]
      every += bn
      drop_frozen(every, frozen)
      opt = tf.train.AdamOptimizer(1e-3)
      train = opt.minimize(loss, var_list=every)
      return train
    """


@pytest.mark.parametrize("code, expected", [
    (_FED1, [("write-back", 15)]),
    (_FED3, [("write-back", 16)]),
    (_FED4, [("write-back", 15)]),
], ids=["fed1_head_after_average", "fed3_second_loop", "fed4_heads_reset"])
def test_a_federated_loop_that_puts_entries_back_is_found(code, expected):
  assert scanned.found(code) == expected


def test_worker_gradients_applied_to_a_filtered_server_list_are_found():
  assert scanned.found(_A3C2) == [("var-list-filter", 15)]


def test_every_trainable_variable_cut_down_by_a_helper_is_found():
  assert scanned.found(_JE3) == [("var-list-filter", 10)]
