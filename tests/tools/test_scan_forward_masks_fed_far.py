"""`tfpartial scan`: a placeholder mask fed, by its graph name, a
thresholding of the session's values in a script that many other files
naming the mask (analysis notebooks, plots) come before in the project
(gaoliyao/BayesianSindyAutoencoder, a kpchamp/SindyAutoencoders copy with
thirty files reading `params["coefficient_mask"]`); and the look-alikes
laid out the same way that stay silent: a draw or a causal triangle fed
by the graph name."""

import pytest

import scanned

NET = """\
    def network(theta, params):
      n, m = params["library_dim"], params["latent_dim"]
      coefficients = tf.get_variable("coefficients", shape=[n, m])
      mask = tf.placeholder(tf.float32, shape=[n, m],
                            name="coefficient_mask")
      return tf.matmul(theta, mask * coefficients), coefficients
    """

# An analysis file that reads the mask and feeds nothing.
READER = """\
    params = load_params()
    print(np.sum(params["coefficient_mask"]))
    plot(params["coefficient_mask"] * coefficients)
    """

TRAIN = """\
    from net import network

    predict, coefficients = network(theta, params)
    step = tf.train.AdamOptimizer().minimize(tf.reduce_mean(predict))
    for i in range(epochs):
      feed = {{}}
      feed["coefficient_mask:0"] = params["coefficient_mask"]
      sess.run(step, feed_dict=feed)
      if i % 500 == 0:
        params["coefficient_mask"] = {chosen}
    """


def _project(chosen):
  files = {f"analysis/plot_{i:02}.py": READER for i in range(14)}
  files["net.py"] = NET
  files["train.py"] = TRAIN.format(chosen=chosen)
  return files


def test_a_thresholding_fed_after_many_readers_is_found():
  found = [f for f in scanned.in_project(_project(
      "np.abs(sess.run(coefficients)) > 0.1"))
           if f[0] == "stop-gradient-mix"]
  assert found == [("stop-gradient-mix", "net.py", 6)]


@pytest.mark.parametrize("chosen", [
    "np.random.rand(n, m) > 0.5",  # DropConnect: a draw.
    "np.tril(np.ones((n, m)))",  # A causal triangle.
], ids=["a draw", "a causal triangle"])
def test_a_mask_no_training_chose_fed_after_many_readers_is_silent(chosen):
  assert [f for f in scanned.in_project(_project(chosen))
          if f[0] == "stop-gradient-mix"] == []
