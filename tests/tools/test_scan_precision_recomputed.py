"""`tfpartial scan` stays silent on a write after the step that puts
back nothing saved before it (part 27's negatives), and still finds the
writes that do.

Every value written read out after the step, in the same pass, or made
from such reads and settings: LassoNet's hier-prox step written into the
skip and hidden kernels with `set_weights`, a Densifier's bias kept at
zero (`model.set_weights([Q, np.zeros_like(b)])`), a federated server
set to the mean of its clients' weights. A data-generating model made by
the writing function itself, its chosen lags zeroed, is written before
any step trains it. The twins keep a copy saved before the step (ahead
of the loop, ahead of each step, in a helper's parameter), choose
elements by a mask or pin chosen elements at a constant: found as
before. Synthetic sources in the shape of real code."""

import pytest
import scanned

_found = scanned.found


# LassoNet (MSc-Thesis-SparseNN): a step on every weight, then the
# hier-prox of the skip and hidden kernels as they are now, set back.
_PROX_LAYERS = """\
    import numpy as np
    import tensorflow as tf

    def hier_prox(theta, W, lam, M):
        return np.sign(theta) * np.maximum(np.abs(theta) - lam, 0), W * M

    def train(network, optimizer, loss_func, X, y, lam, M, epochs):
        for b in range(epochs):
            with tf.GradientTape() as tape:
                losses = loss_func(y, network(X, training=True))
            grads = tape.gradient(losses, network.trainable_weights)
            optimizer.apply_gradients(zip(grads, network.trainable_weights))
            theta_new, W_new = hier_prox(
                network.get_layer('skip').get_weights()[0],
                network.get_layer('gw').get_weights()[0], lam, M)
            new_skip = network.get_layer('skip').get_weights()
            new_skip[0] = theta_new.reshape((-1, 1))
            network.get_layer('skip').set_weights(new_skip)
            new_gw = network.get_layer('gw').get_weights()
            new_gw[0] = {stored}
            network.get_layer('gw').set_weights(new_gw)
    """

# The same prox on the model's whole list, after `fit` (an older
# script of the same thesis).
_PROX_MODEL = """\
    import my_hierprox

    def lasso_path(nn, X, y, alpha, M, B, k):
        l = 1e-3
        while k > 0:
            l = 1.02 * l
            for b in range(B):
                nn.fit(X, y, verbose='0')
                weights = nn.get_weights()
                theta_new, W_new = my_hierprox.hier_prox(
                    weights[0], weights[1], alpha * l, M)
                weights[0] = theta_new
                weights[1] = W_new
                nn.set_weights(weights)
            k -= 1
    """

# A Densifier (mitigating-stereotypes-in-word-embedding): its bias set
# back to zeros after each batch, the transformation read again after
# the loop.
_BIAS = """\
    import numpy as np

    def learn(model, dataset, n_epochs):
        for epoch in range(n_epochs):
            loss = 0
            for i, X in enumerate(dataset):
                loss += model.train_on_batch(X)[0]
                Q, b = model.get_weights()
                model.set_weights([{first}, np.zeros_like(b)])
        Q, b = model.get_weights()
        return Q
    """

# Homogeneous learning: the clients train, the server takes their mean.
_AVERAGED = """\
    import numpy as np

    class Environment(object):
        def step(self, action):
            local_update = []
            for c in action:
                self.client_list[c].fit(self.data[c], self.labels[c], epochs=1)
                local_update.append(self.client_list[c].get_weights())
            local_update = np.array(local_update, dtype=object)
            global_update = self.gmodel.get_weights()
            for w in range(len(self.client_list[0].get_weights())):
                global_update[w] = {mean}
            self.gmodel.set_weights(global_update)
            for local_model in self.client_list:
                local_model.set_weights(self.gmodel.get_weights())
    """

# A simulation's data-generating model, made and written by a function
# its caller runs in a loop that also trains another model.
_GENERATED = """\
    import numpy as np
    import keras as ks

    def generate(n, lags, {model_param}):
        inp = ks.layers.Input(shape=(5,))
        out = ks.layers.Dense(1, name='skip')(inp)
        {made}
        w = dgp.get_layer('skip').get_weights()[0]
        for lag in lags:
            w[lag] = {fill}
        new = dgp.get_layer('skip').get_weights()
        new[0] = w
        dgp.get_layer('skip').set_weights(new)
        return dgp.predict(np.ones((n, 5)))

    def main(model, x, y):
        frozen = model.get_layer('skip').get_weights()[0]
        for run in range(10):
            data = generate(100, [1, 2], {argument})
            model.fit(data, y, epochs=1)
    """

# Kept rows after each step: the copy is saved {when}.
_ROWS = """\
    import numpy as np

    def fit(model, batches, mask):
        frozen = model.get_weights()
        for x, y in batches:
            saved = model.get_weights()
            model.train_on_batch(x, y)
            w = model.get_weights()
            {store}
            model.set_weights(w)
    """

_ELEMENTS = """\
    import tensorflow as tf

    def step(w, opt, loss_fn, lam, mask):
        before = w.numpy()
        with tf.GradientTape() as tape:
            loss = loss_fn(w)
        g = tape.gradient(loss, [w])
        opt.apply_gradients(zip(g, [w]))
        w.assign({value})
    """


@pytest.mark.parametrize("source, expected", [
    (_PROX_LAYERS.format(stored="W_new"), []),
    (_PROX_MODEL, []),
    (_BIAS.format(first="Q"), []),
    (_AVERAGED.format(mean="np.mean(local_update[:, w])"), []),
    (_GENERATED.format(model_param="scale", fill="0",
                       made="dgp = ks.models.Model(inputs=inp, outputs=out)",
                       argument="1.0"), []),
    (_ELEMENTS.format(value="tf.sign(w) * tf.maximum(tf.abs(w) - lam, 0.)"),
     []),
], ids=["prox_of_layers", "prox_of_model_list", "bias_zeroed",
        "clients_averaged", "generating_model_made_here", "prox_assigned"])
def test_weights_recomputed_after_the_step_are_silent(source, expected):
  assert _found(source) == expected


@pytest.mark.parametrize("source, expected", [
    # The hidden kernel set from a copy saved before the loop.
    (_PROX_LAYERS.format(stored="saved_gw").replace(
        "    for b in", "    saved_gw = network.get_layer('gw')"
        ".get_weights()[0]\n        for b in"), [("write-back", 22)]),
    # The whole kernel saved before the loop and put back (as before).
    (_BIAS.format(first="Q0").replace(
        "    for epoch", "    Q0, b0 = model.get_weights()\n        for epoch"),
     [("write-back", 10)]),
    # The server set to one client's copy saved before the clients train.
    (_AVERAGED.format(mean="kept[w]").replace(
        "local_update = []", "kept = self.gmodel.get_weights()\n"
        "            local_update = []"), [("write-back", 14)]),
    # The server set to a model no step trains (a teacher's weights).
    (_AVERAGED.format(mean="self.teacher.get_weights()[w]"),
     [("write-back", 13)]),
    # The written model is the caller's, a copy saved there put back.
    (_GENERATED.format(model_param="dgp, frozen", fill="frozen[lag]",
                       made="pass", argument="model, frozen"),
     [("write-back", 13)]),
    (_ROWS.format(store="w[0][:10] = frozen[0][:10]"), [("write-back", 10)]),
    (_ROWS.format(store="w[0][mask] = saved[0][mask]"), [("write-back", 10)]),
    (_ROWS.format(store="w[0] = np.where(mask, frozen[0], w[0])"),
     [("write-back", 10)]),
    # Chosen elements pinned at a constant: not recomputed, chosen.
    (_ROWS.format(store="w[0] = np.where(mask, 0.5, w[0])"),
     [("write-back", 10)]),
    (_ROWS.format(store="w[0][0, :] = 1.0"), [("write-back", 10)]),
    # Rows of the kernel joined from values kept before the loop.
    (_ROWS.format(store="w[0] = np.concatenate([init[:3], w[0][3:]])")
     .replace("batches, mask", "batches, init"), [("write-back", 10)]),
    # Re-masked: a re-mask still.
    (_ROWS.format(store="w[0] = w[0] * mask"), [("weight-remask", 10)]),
    (_ELEMENTS.format(value="tf.where(mask, before, w)"), [("write-back", 9)]),
], ids=["kernel_saved_before_loop", "whole_kernel_saved", "one_copy_saved",
        "untrained_models_weights", "callers_model_and_copy",
        "rows_saved_before_loop",
        "elements_saved_each_step", "where_saved", "where_constant",
        "row_pinned", "rows_joined", "remasked", "assigned_where_saved"])
def test_values_saved_before_the_step_are_still_found(source, expected):
  assert _found(source) == expected
