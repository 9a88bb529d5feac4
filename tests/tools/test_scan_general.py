"""`tfpartial scan` on forms met in real code that the first rebuild
missed (each pair written from a real project's form, names changed):
what a gradient, a variable list or a write is made of, followed through
keywords, old argument orders, names bound to zeros, conditional
expressions and layers chosen by position; and the look-alikes that
freeze nothing."""

import pytest

import scanned


_found = scanned.in_text


# A Keras constraint that keeps the elements of a mask it makes itself.
_PARAMETER_MASK = """\
        class ParameterMask(tf.keras.constraints.Constraint):
          def __init__(self):
            super().__init__()
            self.mask = None

          def __call__(self, w):
            return tf.where(self.get_mask(w.shape), w, 0)

          def get_mask(self, shape):
            if self.mask is None:
              self.mask = tf.Variable(tf.ones(shape, dtype=tf.bool),
                                      trainable=False)
            return self.mask
"""

POSITIVE = {
    # Simon-lsy's Deep Compression: the mask is a copy of the pruned weights
    # with its nonzero elements set to one, kept per layer and multiplied
    # into the kernel after every `train_on_batch`.
    "a mask made by setting a pruned copy's nonzero elements to one": ("""\
        from copy import deepcopy

        def prune_weights(weight):
          weight[np.abs(weight) < np.percentile(np.abs(weight), 50)] = 0
          sparse_matrix = deepcopy(weight)
          sparse_matrix[sparse_matrix != 0] = 1
          return weight, sparse_matrix

        model = build()
        model.compile("adam", "mse")
        sparse_layer = {}
        for layer_id in range(len(model.layers)):
          w = model.layers[layer_id].get_weights()
          new_weight, sparse_matrix = prune_weights(w[0])
          sparse_layer[layer_id] = sparse_matrix
          w[0] = new_weight
          model.layers[layer_id].set_weights(w)
        for j in range(100):
          model.train_on_batch(x[j], y[j])
          for layer_id in sparse_layer:
            w = model.layers[layer_id].get_weights()
            w[0] = w[0] * sparse_layer[layer_id]
            model.layers[layer_id].set_weights(w)
        """, [("weight-remask", 23)]),
    # live-trojans: the gradients kept on the object and masked element by
    # element in a loop over that same attribute, applied by another method.
    "gradients masked in place in an attribute, applied elsewhere": ("""\
        class Attacker:
          def select(self, gradients):
            self.selected = gradients
            for i, (grad, var) in enumerate(self.selected):
              mask = np.zeros(grad.get_shape().as_list(), dtype=np.float32)
              mask[pick(grad)] = 1.0
              mask = tf.constant(mask)
              self.selected[i] = (tf.multiply(grad, mask), self.selected[i][1])

          def retrain(self):
            return self.optimizer.apply_gradients(self.selected)

          def attack(self, loss):
            self.select(self.optimizer.compute_gradients(loss))
            self.retrain()
        """, [("grads-mask", 8)]),
    # NeurST's partial tuning: an optimizer class made at run time whose
    # `apply_gradients` calls the step, then mixes each weight back with
    # its non-trainable original under two masks, in a loop over them.
    # The loop does not train, but the function runs with every step.
    "shadow-variable originals mixed back in a loop after the step": ("""\
        class _PartialTuningOptimizer(tf.keras.optimizers.Optimizer):
          def __init__(self, **kwargs):
            super(self.__class__, self).__init__(**kwargs)
            self._weights = list(model.trainable_weights)
            self._vars = self._create_variable_masks()

          def _create_variable_masks(self):
            originals = [tf.Variable(tf.cast(w, w.dtype), trainable=False)
                         for w in self._weights]
            masks = [tf.Variable(tf.cast(tf.math.not_equal(w, 0.), w.dtype),
                                 trainable=False) for w in self._weights]
            tuning = [tf.Variable(tf.cast(tf.math.equal(w, 0.), w.dtype),
                                  trainable=False) for w in self._weights]
            return list(zip(self._weights, originals, masks, tuning))

          def apply_gradients(self, grads_and_vars, name=None):
            results = super(self.__class__, self).apply_gradients(
                grads_and_vars, name)
            for weight, original, original_mask, tuning_mask in self._vars:
              masked = original * original_mask + weight * tuning_mask
              weight.assign(masked)
            return results
        """, [("shadow-variable", 21)]),
    # Lottery-ticket layers: the kernel used in the forward pass is the
    # trainable kernel under a mask plus, elsewhere, a non-trainable copy
    # of its initial values.
    "stop-gradient-mix a kernel mixed with a non-trainable initial copy": ("""\
        class FreezeDense(Dense):
          def __init__(self, units, init_weight, mask_weight, **kwargs):
            super().__init__(units, **kwargs)
            self.init_weight = init_weight
            self.mask_weight = mask_weight
            self.mask_weight_rev = np.abs(mask_weight - 1)

          def build(self, input_shape):
            super().build(input_shape)
            self._underlying_kernel = self.kernel
            self.kernel_init = K.variable(value=self.init_weight)
            self.kernel_mask = K.variable(value=self.mask_weight)
            self.kernel_mask_rev = K.variable(value=self.mask_weight_rev)
            self._non_trainable_weights.append(self.kernel_init)
            self._non_trainable_weights.append(self.kernel_mask)
            self._non_trainable_weights.append(self.kernel_mask_rev)
            self.kernel = (self._underlying_kernel * self.kernel_mask
                           + self.kernel_mask_rev * self.kernel_init)
        """, [("stop-gradient-mix", 17)]),
    # Lottery tickets in Keras: before every batch the model's weights
    # are read out by a helper, multiplied by the pruning mask in
    # another helper, and set back.
    "weight-remask a model's weights masked by helpers before each batch": ("""\
        class Pruned:
          def get_weights(self):
            weights = {}
            for idx, layer in enumerate(self.model.layers):
              weights[idx] = layer.get_weights()[0]
            return weights

          def mask_weights(self, mask, weights):
            new_weights = list()
            for idx, layer in enumerate(self.model.layers):
              new_weights.append(weights[idx] * mask[idx])
              new_weights.append(layer.get_weights()[1])
            return new_weights

          def fit_batch(self, x, y, mask, weights_init, n_epochs, n):
            current_weights = weights_init
            for e in range(n_epochs):
              for j in range(len(x) // n):
                masked_weights = self.mask_weights(mask, current_weights)
                self.model.set_weights(masked_weights)
                self.model.train_on_batch(x[j:j + n], y[j:j + n])
                current_weights = self.get_weights()
        """, [("weight-remask", 20)]),
    # Fitting knot positions: the two end knots kept in place by zeros
    # scattered into their gradient rows, given as a literal list.
    "grads-mask zeros scattered from a literal list into a gradient": ("""\
        def train(x_points, n, optimizer, loss_fn):
          for epoch in range(10):
            with tf.GradientTape() as tape:
              loss_value = loss_fn(x_points)
            gradients = tape.gradient(loss_value, [x_points])
            gradients[0] = tf.tensor_scatter_nd_update(
                gradients[0], [[0], [n - 1]], [0.0, 0.0])
            optimizer.apply_gradients(zip(gradients, [x_points]))
        """, [("grads-mask", 6)]),
    # A weight watermark: chosen elements set back to fixed signature
    # values after every batch, blended in by arithmetic.
    "write-back saved values blended into masked elements by arithmetic": ("""\
        class Signature:
          def sign(self, model):
            for i, tensor in enumerate(model.trainable_weights):
              tensor.assign((1 - self.masks[i]) * tensor
                            + self.masks[i] * self.frozen[i])

        class WeightsFreezer(keras.callbacks.Callback):
          def __init__(self, sig):
            self.sig = sig

          def on_batch_end(self, batch, logs=None):
            self.sig.sign(self.model)
        """, [("write-back", 4)]),
    # Reading comprehension: the word table joined from a variable for
    # the unknown word, one for the special tokens, and the pretrained
    # vectors as a constant (those rows never train).
    "stop-gradient-mix a table joined from variable rows and constant rows": ("""\
        class FixedWordEmbedder(object):
          def init(self, word_to_vec, voc, special_tokens, dim):
            null_embed = tf.zeros((1, dim), dtype=tf.float32)
            unk_embed = tf.get_variable(shape=(1, dim), name="unk_embed",
                                        trainable=self.learn_unk)
            matrix_list = [null_embed, unk_embed]
            if special_tokens:
              tok_embed = tf.get_variable(shape=(len(special_tokens), dim),
                                          name="token_embed", trainable=True)
              matrix_list.append(tok_embed)
            mat = [word_to_vec[word] for word in voc]
            matrix_list.append(tf.constant(value=np.vstack(mat)))
            self._word_emb_mat = tf.concat(matrix_list, axis=0)
        """, [("stop-gradient-mix", 13)]),
    # A registry names the constraint class; configurations build it by
    # that name (never spelled as a call), and load saved models with it.
    "weight-remask a constraint class built from a registry": (
        _PARAMETER_MASK + """\

        REGISTRY = {"ParameterMask": ParameterMask}

        def load(path):
          return tf.keras.models.load_model(path, custom_objects=REGISTRY)
        """, [("weight-remask", 7)]),
    # PackNet for continual RL: the base agent calls a hook on its
    # gradients that a subclass overrides to mask the kernels' gradients
    # (`self.adjust_gradients` dispatches to it), then applies them through
    # a method taking them unpacked.
    "grads-mask in a subclass's override of a hook the base calls": ("""\
        class SAC:
          def adjust_gradients(self, actor_gradients, critic_gradients):
            return actor_gradients, critic_gradients

          def learn_on_batch(self, batch):
            gradients = self.get_gradients(batch)
            gradients = self.adjust_gradients(*gradients)
            self.apply_update(*gradients)

          def get_gradients(self, batch):
            with tf.GradientTape(persistent=True) as g:
              pi_loss, value_loss = self.losses(batch)
            actor_gradients = g.gradient(pi_loss, self.actor.trainable_variables)
            critic_gradients = g.gradient(value_loss, self.critic_variables)
            return actor_gradients, critic_gradients

          def apply_update(self, actor_gradients, critic_gradients):
            self.optimizer.apply_gradients(
                zip(actor_gradients, self.actor.trainable_variables))
            self.optimizer.apply_gradients(
                zip(critic_gradients, self.critic_variables))

        class PackNet(SAC):
          def adjust_gradients(self, actor_gradients, critic_gradients):
            actor_gradients = self._adjust_list(
                actor_gradients, self.actor.trainable_variables, self.task)
            return actor_gradients, critic_gradients

          def _adjust_list(self, grads, variables, seq_idx):
            res = []
            for g, v in zip(grads, variables):
              if "kernel" in v.name:
                res.append(g * tf.cast(self.owner[v.ref()] == seq_idx,
                                       tf.float32))
              else:
                res.append(g)
            return res
        """, [("grads-mask", 33)]),
    # Prune-then-finetune: the apply handed to a helper that masks the
    # gradients with masks read from a file, then calls it.
    "grads-mask before an apply passed in as a function": ("""\
        def apply_gradients_prune(origin_func, grads_and_vars, mask_file,
                                  **kwargs):
          mask_array = tf.get_collection("mask")
          for index in range(len(grads_and_vars)):
            for mask in mask_array:
              if mask.name == grads_and_vars[index][1].name:
                new_grad = grads_and_vars[index][0] * mask
                grads_and_vars[index] = (new_grad, grads_and_vars[index][1])
          return origin_func(grads_and_vars, **kwargs)

        def train(loss):
          optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
          grads_and_vars = optimizer.compute_gradients(loss)
          return apply_gradients_prune(optimizer.apply_gradients,
                                       grads_and_vars, "mask.json")
        """, [("grads-mask", 7)]),
    # Lottery tickets: a callback re-applies each layer's mask object (a
    # class of the project multiplying by the mask it holds) after every
    # batch.
    "weight-remask a mask object's apply in a callback": ("""\
        class Masker:
          def __init__(self, p):
            self.p = p
            self.mask_ = None

          def apply(self, w):
            return np.multiply(w, self.mask_)

        class FreezeCallback(keras.callbacks.Callback):
          def __init__(self, masks):
            self.masks = masks

          def on_batch_end(self, batch, logs=None):
            i = 0
            for l in self.model.layers:
              l.set_weights([self.masks[i].apply(l.get_weights()[0])])
              i += 1
        """, [("weight-remask", 16)]),
    # An HMM emitter: its emission matrix, computed from the layer's
    # kernel by the base class, mixed with its stopped copy under a mask
    # of the states that train (in a helper and in place).
    "stop-gradient-mix a matrix the layer computes from its kernel": ("""\
        class ProfileEmitter(CategoricalEmitter):
          def matrix(self):
            matrix = super().matrix()
            return self._prepare_matrix(matrix)

          def _prepare_matrix(self, matrix):
            if not self.trainable_insertions:
              mask = tf.sequence_mask(self.lengths, maxlen=tf.shape(matrix)[1],
                                      dtype=matrix.dtype)
              mask = mask[:, :, tf.newaxis]
              matrix = mask * matrix + (1 - mask) * tf.stop_gradient(matrix)
            return matrix

        class EmbeddingEmitter(CategoricalEmitter):
          def matrix(self, sqrt_variance=False):
            matrix = super().matrix(sqrt_variance)
            matrix = tf.gather(matrix, self.head_subset, axis=0)
            if not self.trainable_insertions:
              mask = tf.sequence_mask(self.lengths, maxlen=tf.shape(matrix)[1],
                                      dtype=matrix.dtype)
              matrix = mask * matrix + (1 - mask) * tf.stop_gradient(matrix)
            return matrix
        """, [("stop-gradient-mix", 11), ("stop-gradient-mix", 21)]),
    # Memory networks: the nil word's row rebuilt as zeros in a helper,
    # applied to the embeddings named in a set.
    "grads-mask concat(values=) in a helper, zeros by name": ("""\
        def zero_nil_slot(t, name=None):
          with tf.name_scope(name or "zero_nil_slot"):
            t = tf.convert_to_tensor(t, name="t")
            s = tf.shape(t)[1]
            z = tf.zeros(tf.stack([1, s]))
            return tf.concat(axis=0, values=[z, tf.slice(t, [1, 0], [-1, -1])])

        class MemN2N(object):
          def __init__(self, opt, loss):
            self._nil_vars = set([self.A.name, self.B.name])
            grads_and_vars = opt.compute_gradients(loss)
            grads_and_vars = [(tf.clip_by_norm(g, 40.0), v)
                              for g, v in grads_and_vars]
            nil_grads_and_vars = []
            for g, v in grads_and_vars:
              if v.name in self._nil_vars:
                nil_grads_and_vars.append((zero_nil_slot(g), v))
              else:
                nil_grads_and_vars.append((g, v))
            self.train_op = opt.apply_gradients(nil_grads_and_vars)
        """, [("grads-mask", 17)]),  # Where the helper is used.
    "grads-mask TF 0.x concat(dim, values)": ("""\
        gvs = opt.compute_gradients(loss)
        g, v = gvs[0]
        g2 = tf.concat(0, [tf.zeros([1, 50]), tf.slice(g, [1, 0], [-1, -1])])
        train = opt.apply_gradients([(g2, v)] + gvs[1:])
        """, [("grads-mask", 3)]),
    "grads-mask None for the frozen variables": ("""\
        def build(loss, frozen):
          opt = tf.compat.v1.train.AdamOptimizer(1e-4)
          gvs = opt.compute_gradients(loss)
          gvs = [(None if v.name.startswith(frozen) else g, v) for g, v in gvs]
          return opt.apply_gradients(gvs)
        """, [("grads-mask", 4)]),
    "grads-mask zeros for the frozen variables": ("""\
        def step(model, opt, x, names):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          grads = [tf.zeros_like(g) if v.name in names else g
                   for g, v in zip(grads, model.trainable_variables)]
          opt.apply_gradients(zip(grads, model.trainable_variables))
        """, [("grads-mask", 5)]),
    "grads-mask rows of a mask built from the gradient's shape": ("""\
        def train(model, optimizer, new_ids, batch):
          with tf.GradientTape() as tape:
            loss = model(batch)
          grads = tape.gradient(loss, [model.embedding])
          g = tf.convert_to_tensor(grads[0])
          mask = tf.scatter_nd(tf.expand_dims(new_ids, 1),
                               tf.ones_like(new_ids, tf.float32),
                               [tf.shape(g)[0]])
          g = g * tf.expand_dims(mask, 1)
          optimizer.apply_gradients([(g, model.embedding)])
        """, [("grads-mask", 9)]),
    "var-list-filter the last layer's variables": ("""\
        base = tf.keras.applications.MobileNetV2(include_top=False)
        model = tf.keras.Sequential([base, tf.keras.layers.Dense(10)])
        opt = tf.keras.optimizers.Adam()

        @tf.function
        def step(x, y):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x) - y)
          variables = model.layers[-1].trainable_variables
          grads = tape.gradient(loss, variables)
          opt.apply_gradients(zip(grads, variables))
        """, [("var-list-filter", 9)]),
    # TF Object Detection's few-shot colab, copied into many notebooks:
    # the heads' variables chosen in a loop, handed to a step factory.
    "var-list-filter a loop's choice handed to a closure's step": ("""\
        trainable_variables = detection_model.trainable_variables
        to_fine_tune = []
        prefixes_to_train = ['BoxPredictor/BoxHead', 'BoxPredictor/ClassHead']
        for var in trainable_variables:
          if any([var.name.startswith(prefix) for prefix in prefixes_to_train]):
            to_fine_tune.append(var)

        def get_model_train_step_function(model, optimizer, vars_to_fine_tune):
          def train_step_fn(images, shapes):
            with tf.GradientTape() as tape:
              total_loss = model.loss(model.predict(images, shapes), shapes)
              gradients = tape.gradient(total_loss, vars_to_fine_tune)
              optimizer.apply_gradients(zip(gradients, vars_to_fine_tune))
            return total_loss
          return train_step_fn

        optimizer = tf.keras.optimizers.SGD(learning_rate=0.01, momentum=0.9)
        step = get_model_train_step_function(detection_model, optimizer,
                                             to_fine_tune)
        """, [("var-list-filter", 6)]),
    "Python 2: a mask from a module that prints": ("""\
        def prune_on_grads(grads_and_vars, masks):
          for key, nzidx in masks.items():
            count = 0
            for grad, var in grads_and_vars:
              if var.name == key + ":0":
                print "masking", var.name, \\
                    "with", nzidx.sum()
                mask = tf.cast(tf.constant(nzidx), tf.float32)
                grads_and_vars[count] = (tf.mul(mask, grad), var)
              count += 1
          return grads_and_vars

        try:
          gvs = opt.compute_gradients(loss)
        except ValueError, e:
          print >>sys.stderr, e
        train = opt.apply_gradients(prune_on_grads(gvs, masks))
        """, [("grads-mask", 9)]),
    # ALBERT's create_optimizer(excluded_tvars=...).
    "var-list-filter variables removed by name": ("""\
        def create_optimizer(loss, init_lr, excluded_tvars=None):
          optimizer = AdamWeightDecayOptimizer(learning_rate=init_lr)
          tvars = tf.trainable_variables()
          for tvar in tvars:
            if excluded_tvars and tvar.name in excluded_tvars:
              tvars.remove(tvar)
          grads = tf.gradients(loss, tvars)
          return optimizer.apply_gradients(zip(grads, tvars))
        """, [("var-list-filter", 6)]),
    # DrQA's --tune_partial in TF: the first rows a variable, the rest a
    # constant.
    "stop-gradient-mix a table split into a variable and a constant": ("""\
        class Reader(object):
          def __init__(self, opt, embedding):
            embedVar = tf.Variable(embedding[:opt['tune_partial']])
            embedCst = tf.constant(embedding[opt['tune_partial']:])
            embedding = tf.concat([embedVar, embedCst], axis=0)
            self.x_emb = tf.nn.embedding_lookup(embedding, self.x)
        """, [("stop-gradient-mix", 5)]),
    # Deep compression (TF1, Python 2): gradients and weights masked in
    # NumPy and fed back through the session.
    "grads-mask and weight-remask through feed_dict": ("""\
        class Layer(object):
          def __init__(self, d):
            self.w = tf.Variable(tf.random.normal([d, d]))
            self.w_PH = tf.placeholder(tf.float32, self.w.shape)
            self.assign_w = tf.assign(self.w, self.w_PH)

          def prune(self, sess, threshold):
            w_data = sess.run(self.w)
            self.mask_data = (np.abs(w_data) >= threshold).astype(np.float32)
            sess.run(self.assign_w, feed_dict={self.w_PH: self.mask_data * w_data})

          def prune_gradient(self, grad):
            return grad * self.mask_data

          def prune_update(self, sess):
            w_data = sess.run(self.w)
            sess.run(self.assign_w, feed_dict={self.w_PH: self.mask_data * w_data})

        LAYERS = [Layer(3), Layer(4)]
        grads = tf.gradients(loss, [L.w for L in LAYERS])
        train_step = opt.apply_gradients(zip(grads, [L.w for L in LAYERS]))
        with tf.Session() as sess:
          for i in range(1000):
            grads_data = sess.run(grads, feed_dict={x_PH: batch_x})
            feed_dict = {}
            for L, grad, grad_data in zip(LAYERS, grads, grads_data):
              feed_dict[grad] = L.prune_gradient(grad_data)
            sess.run(train_step, feed_dict=feed_dict)
            for L in LAYERS:
              L.prune_update(sess)
        """, [("grads-mask", 13), ("weight-remask", 17)]),
    "grads-mask zeros appended for the variables a test names": ("""\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          new_grads = []
          for g, v in zip(grads, model.trainable_variables):
            if 'embedding' in v.name:
              new_grads.append(tf.zeros_like(g))
            else:
              new_grads.append(g)
          opt.apply_gradients(zip(new_grads, model.trainable_variables))
        """, [("grads-mask", 8)]),
    "grads-mask a gradient times zero": ("""\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          grads[0] *= 0.
          opt.apply_gradients(zip(grads, model.trainable_variables))
        """, [("grads-mask", 5)]),
    "grads-mask rows dropped by boolean_mask": ("""\
        def step(emb, opt, ids, loss_fn, trainable_ids):
          with tf.GradientTape() as tape:
            loss = loss_fn(tf.gather(emb, ids))
          g = tape.gradient(loss, emb)
          keep = tf.reduce_any(tf.equal(g.indices[:, None], trainable_ids), 1)
          g = tf.IndexedSlices(tf.boolean_mask(g.values, keep),
                               tf.boolean_mask(g.indices, keep), g.dense_shape)
          opt.apply_gradients([(g, emb)])
        """, [("grads-mask", 6)]),
    "var-list-filter the last layers' weights in a comprehension": ("""\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          train_vars = [w for l in model.layers[-3:] for w in l.trainable_weights]
          grads = tape.gradient(loss, train_vars)
          opt.apply_gradients(zip(grads, train_vars))
        """, [("var-list-filter", 4)]),
    "var-list-filter optimize_loss(variables=)": ("""\
        def model_fn(features, labels, mode, params):
          loss = tf.losses.softmax_cross_entropy(labels, net(features))
          tvars = [v for v in tf.trainable_variables() if v.name.startswith('head')]
          train_op = tf.contrib.layers.optimize_loss(
              loss, tf.train.get_global_step(), learning_rate=0.01,
              optimizer='Adam', variables=tvars)
          return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        """, [("var-list-filter", 3)]),
    # DeepLabCut: the head's scope is also opened where the model is
    # built, but a second op trains the same loss on everything.
    "var-list-filter a second train op on the head's scope": ("""\
        def prediction_layers(net):
          with tf.variable_scope("pose"):
            return slim.conv2d(net, 17, [1, 1])

        def get_optimizer_with_freeze(loss_op, optimizer):
          train_unfrozen_op = slim.learning.create_train_op(loss_op, optimizer)
          unfrozen = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "pose")
          train_frozen_op = slim.learning.create_train_op(
              loss_op, optimizer, variables_to_train=unfrozen)
          return train_unfrozen_op, train_frozen_op
        """, [("var-list-filter", 7)]),
    "var-list-filter a hand-written update skipping variables by name": ("""\
        def train_step(model, x, y, lr):
          with tf.GradientTape() as tape:
            loss = model(x, y)
          grads = tape.gradient(loss, model.trainable_variables)
          for g, v in zip(grads, model.trainable_variables):
            if "embedding" in v.name:
              continue
            v.assign_sub(lr * g)
        """, [("var-list-filter", 6)]),
    "weight-remask K.batch_set_value of each weight times its mask": ("""\
        class Pruner(keras.callbacks.Callback):
          def __init__(self, masks):
            self.masks = masks

          def on_batch_end(self, batch, logs=None):
            weights = self.model.trainable_weights
            K.batch_set_value([(w, K.get_value(w) * m)
                               for w, m in zip(weights, self.masks)])
        """, [("weight-remask", 7)]),
    # A BERT-style optimizer freezing the pretrained variables for the
    # first steps.
    "grads-mask an optimizer's update masked for named variables": ("""\
        class AdamWeightDecay(tf.train.Optimizer):
          def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            assignments = []
            for (grad, param) in grads_and_vars:
              m = tf.get_variable(param.op.name + "/m", param.shape,
                                  trainable=False)
              next_m = self.beta_1 * m + (1.0 - self.beta_1) * grad
              update = next_m / (tf.sqrt(next_m * next_m) + self.epsilon)
              if param.name in self.pretrained_param_names:
                update *= tf.to_float(global_step > self.freeze_steps)
              next_param = param - self.learning_rate * update
              assignments.extend([param.assign(next_param), m.assign(next_m)])
            return tf.group(*assignments, name=name)
        """, [("grads-mask", 10)]),
    # P-tuning on bert4keras: a layer's own embeddings, from its base.
    "stop-gradient-mix a layer's embeddings through a stopped name": ("""\
        class PtuningEmbedding(Embedding):
          def call(self, inputs, mode='embedding'):
            embeddings = self.embeddings
            embeddings_sg = K.stop_gradient(embeddings)
            mask = np.zeros((K.int_shape(embeddings)[0], 1))
            mask[1:9] += 1
            self.embeddings = embeddings * mask + embeddings_sg * (1 - mask)
            outputs = super(PtuningEmbedding, self).call(inputs, mode)
            self.embeddings = embeddings
            return outputs
        """, [("stop-gradient-mix", 7)]),
    # Zeros written back into fixed rows: `write-back`, as the shared
    # corpus labels char-CNN's padding row (held-aside builders called it
    # a re-mask; the measurement counts either).
    "weight-remask padding rows zeroed by a method after each step": ("""\
        class Recommender(tf.keras.Model):
          def reset_pad_embedding(self):
            tf.compat.v1.scatter_update(self.tags, self.pad_value,
                                        tf.zeros([self.dim]))

          def train(self, data):
            for x, y in data:
              with tf.GradientTape() as tape:
                loss = self.loss_fn(y, self(x))
              grads = tape.gradient(loss, self.trainable_weights)
              self.opt.apply_gradients(zip(grads, self.trainable_weights))
              self.reset_pad_embedding()
        """, [("weight-remask", 3)]),
    "weight-remask a constraint's tf.where(mask, w, 0), at its line": (
        _PARAMETER_MASK, [("weight-remask", 7)]),
    "var-list-filter the same slice at the gradient and at the apply": ("""\
        def train(model, optimizer, data, update_embeddings):
          for x in data:
            with tf.GradientTape() as tape:
              loss = model.loss(x)
              if update_embeddings:
                gradients = tape.gradient(loss, model.trainable_variables)
              else:
                gradients = tape.gradient(loss, model.trainable_variables[1:])
            if update_embeddings:
              optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            else:
              optimizer.apply_gradients(zip(gradients, model.trainable_variables[1:]))
        """, [("var-list-filter", 8)]),
    # A-GEM's feature-extraction baseline: the classifier's last pairs.
    "var-list-filter (gradient, variable) pairs sliced": ("""\
        class Model(object):
          def build(self, loss):
            self.opt = tf.train.AdamOptimizer()
            self.gvs = self.opt.compute_gradients(loss)
            self.train = self.opt.apply_gradients(self.gvs)
            self.train_classifier = self.opt.apply_gradients(self.gvs[-2:])
        """, [("var-list-filter", 6)]),
    "var-list-filter pairs sliced beside their whole, other losses near": (
        """\
        class Model(object):
          def build(self, loss, losses, tvars):
            self.opt = tf.train.AdamOptimizer()
            self.column = [self.opt.compute_gradients(losses[i], var_list=tvars[i])
                           for i in range(3)]
            self.gvs = self.opt.compute_gradients(loss, var_list=tvars)

          def train_op(self):
            self.train = self.opt.apply_gradients(self.gvs)
            self.train_classifier = self.opt.apply_gradients(self.gvs[-2:])
        """, [("var-list-filter", 10)]),
    # Conure (Python 2): a new task's softmax and the weights, by name,
    # in one list; prints that continue on the next line or end in a
    # comment.
    "var-list-filter Python 2: a list of two chosen parts": ("""\
        def main(loss, task):
          tvars = tf.trainable_variables()
          print "LOSS: {} ITER: {}".format(
              1, 2)
          print "hits:", 3  # 5
          weight = [v for v in tvars if v.name.find("weight") != -1]
          softmax = [v for v in tvars if v.name.find("softmax_%d" % task) != -1]
          return tf.train.AdamOptimizer(0.1).minimize(loss, var_list=[
              softmax, weight])
        """, [("var-list-filter", 8)]),
    # BiDAF's sparse fine-tuning: the model object, passed to a trainer,
    # holds the variables listed in a JSON file.
    "var-list-filter an object's chosen variables, passed to a trainer": (
        """\
        class Model(object):
          def __init__(self, config):
            self.var_list = None
            if config.finetuning_config:
              with open(config.finetuning_config) as fi:
                included = json.load(fi)['var_names']
                self.var_list = []
                for v in tf.trainable_variables():
                  if v.op.name in included:
                    self.var_list.append(v)

          def get_var_list(self):
            return self.var_list

        class Trainer(object):
          def __init__(self, config, model):
            self.opt = tf.train.AdamOptimizer(config.lr)
            self.var_list = model.get_var_list()
            self.grads = self.opt.compute_gradients(model.loss, var_list=self.var_list)
            self.train_op = self.opt.apply_gradients(self.grads)

        def main(config):
          trainer = Trainer(config, Model(config))
        """, [("var-list-filter", 10)]),
    # keras-bert: a layer over a hub module declares only the last
    # encoder layers trainable.
    "var-list-filter a Keras layer's _trainable_weights chosen by name": (
        """\
        class BertLayer(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.bert = hub.Module(self.bert_path, trainable=True)
            layers = ["encoder/layer_%d" % (11 - i) for i in range(self.n)]
            trainable_vars = [v for v in self.bert.variables
                              if any([l in v.name for l in layers])]
            for var in trainable_vars:
              self._trainable_weights.append(var)
            for var in self.bert.variables:
              if var not in self._trainable_weights:
                self._non_trainable_weights.append(var)
        """, [("var-list-filter", 5)]),
    # Its first form: the hub module's variable map less the unused
    # heads, then the last few by position.
    "var-list-filter a layer's weights, the last of a hub module's map": (
        """\
        class BertLayer(Layer):
          def build(self, input_shape):
            self.bert = hub.Module(self.tf_hub, trainable=self.is_trainable)
            variables = list(self.bert.variable_map.values())
            if self.is_trainable:
              kept = [var for var in variables if not "/cls/" in var.name]
              kept = kept[-self.n_fine_tune_layers:]
              for var in kept:
                self._trainable_weights.append(var)
              for var in self.bert.variables:
                if var not in self._trainable_weights:
                  self._non_trainable_weights.append(var)
        """, [("var-list-filter", 7)]),
    # TensorFlow's guide: a second head fine-tuned on a shared trunk.
    "var-list-filter one part's variables, the whole model run": ("""\
        trunk = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        head1 = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        head2 = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        path2 = tf.keras.Sequential([trunk, head2])

        for x, y in small_dataset:
          with tf.GradientTape() as tape:
            loss = loss_fn(path2(x), y)
          gradients = tape.gradient(loss, head2.trainable_variables)
          optimizer.apply_gradients(zip(gradients, head2.trainable_variables))
        """, [("var-list-filter", 9)]),
    # SimCLR: the blocks after a given one, by collections named so.
    "var-list-filter collections named from a prefix and a block": ("""\
        def model_fn(features, labels, mode, params):
          loss = tf.losses.get_total_loss()
          if FLAGS.train_mode == 'pretrain':
            variables_to_train = tf.trainable_variables()
          else:
            collection_prefix = 'trainable_variables_inblock_'
            variables_to_train = []
            for j in range(FLAGS.fine_tune_after_block + 1, 6):
              variables_to_train += tf.get_collection(collection_prefix + str(j))
          optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
          train_op = optimizer.minimize(loss, var_list=variables_to_train)
          return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        """, [("var-list-filter", 9)]),
    # AdaNet: the variables created since a snapshot, handed by keyword
    # to an ensembler the project implements (a parameter here).
    "var-list-filter handed to a method of an object passed in": ("""\
        class Ensembler(object):
          def build_train_op(self, ensemble, loss, var_list, labels):
            optimizer = tf.train.AdamOptimizer(0.01)
            return optimizer.minimize(loss=loss, var_list=var_list)

        def _get_current_vars(diffbase=None):
          trainable_vars = tf.trainable_variables()
          if diffbase:
            trainable_vars = trainable_vars[len(diffbase["trainable"]):]
          return {"trainable": trainable_vars}

        def build_ensemble_spec(ensembler, features, labels, builder):
          old_vars = _get_current_vars()
          ensemble = builder.build(features)
          loss = tf.reduce_mean(ensemble.logits)
          ensemble_vars = _get_current_vars(diffbase=old_vars)["trainable"]
          return ensembler.build_train_op(ensemble=ensemble, loss=loss,
                                          var_list=ensemble_vars, labels=labels)
        """, [("var-list-filter", 16)]),
    # A membership classifier on a fine-tuned BERT: create_model returns
    # only the new head's weights to train.
    "var-list-filter the new head's weights a create_model returns": ("""\
        def create_model(features, num_labels):
          output_weights = tf.get_variable("output_weights", [num_labels, 768])
          logits = tf.matmul(features, output_weights, transpose_b=True)
          member_w = tf.get_variable("member_w", [2, num_labels])
          member_b = tf.get_variable("member_b", [2])
          member_logits = tf.matmul(logits, member_w, transpose_b=True) + member_b
          return member_logits, [member_w, member_b]

        def model_fn(features, labels, mode, params):
          member_logits, member_vars = create_model(features, 2)
          loss = tf.losses.sparse_softmax_cross_entropy(labels, member_logits)
          optimizer = tf.train.AdamOptimizer(1e-3)
          train_op = optimizer.minimize(loss=loss, var_list=member_vars)
          return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        """, [("var-list-filter", 13)]),
    # Incremental few-shot: only the pairs of the layer just added.
    "var-list-filter pairs kept by membership in a new layer's": ("""\
        def extend(self, opt):
          new_layer = snt.Linear(10, name='class_linear2')
          loss = self.get_loss(new_layer(self.inputs))
          grads = opt.compute_gradients(loss)
          allowed = [(g, w) for (g, w) in grads if w in new_layer.get_variables()]
          return opt.apply_gradients(allowed)
        """, [("var-list-filter", 5)]),
    # AdaNet: the variables created since a snapshot (a new subnetwork).
    "var-list-filter the variables created after a point": ("""\
        def build(features, builder, opt):
          old_vars = set(tf.trainable_variables())
          loss = tf.reduce_mean(builder.build_subnetwork(features))
          new_vars = [v for v in tf.trainable_variables() if v not in old_vars]
          return opt.minimize(loss, var_list=new_vars)
        """, [("var-list-filter", 4)]),
    # A DQN widened for transfer: the original weights snapshotted, the
    # new input rows put back in them, set back after each fit by a
    # method the step calls.
    "write-back a snapshot set back by a method called after each fit": (
        """\
        class TransferAgent(Agent):
          def freeze(self):
            self.frozen = self.model.get_weights()

          def apply_frozen(self, cut=-1):
            w_new = self.model.get_weights()[0][cut]
            self.frozen[0] = np.delete(self.frozen[0], cut, axis=0)
            self.frozen[0] = np.vstack([self.frozen[0], w_new])
            self.model.set_weights(self.frozen)

          def train_step(self, state, target):
            self.model.fit(np.array(state), np.array(target), verbose=False)
            self.apply_frozen()
        """, [("write-back", 9)]),
    # Fine-grained transfer: the chosen filters of the last trainable
    # layer stopped by a helper put as a `Lambda` layer after it.
    "stop-gradient-mix a helper's per-filter mix in a Lambda layer": ("""\
        def stopBackprop(x, filters):
          mask = np.ones(x.shape[1:])
          for f in filters:
            mask[:, :, f] = 0
          mask_l = K.cast(mask, dtype=x.dtype)
          mask_h = K.abs(mask_l - 1)
          return K.stop_gradient(mask_h * x) + mask_l * x

        def construct_target_partial_update(base_model, n_classes, filters):
          x = base_model.output
          x = Lambda(stopBackprop, arguments={'filters': filters})(x)
          predictions = Dense(n_classes, activation='softmax')(Flatten()(x))
          model = Model(inputs=base_model.input, outputs=predictions)
          model.compile(optimizer='rmsprop', loss='categorical_crossentropy')
          return model
        """, [("stop-gradient-mix", 11)]),
    # CaImAn's ring model: a factory returns a nested function (not a
    # lambda) that keeps the kernel's elements inside a fixed ring.
    "weight-remask a constraint factory's nested function": ("""\
        def masked_constraint(R):
          R_exp = tf.expand_dims(tf.expand_dims(tf.cast(R, tf.float32), -1), -1)
          def my_constraint(x):
            Rt = tf.tile(R_exp, [1, 1, 1, x.shape[-1]])
            Z = tf.zeros_like(x)
            return tf.where(Rt > 0, x, Z)
          return my_constraint

        class MaskedConv2D(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.h = self.add_weight(name="h", shape=self.kernel_size,
                                     constraint=masked_constraint(self.mask),
                                     trainable=True)
        """, [("weight-remask", 12)]),
}

NEGATIVE = {
    # Lambda layers whose helpers stop gradients by the input's own values
    # (a gate) or pass them straight through (rounding).
    "a Lambda layer's gate or straight-through estimator": """\
        def gate(x):
          m = K.cast(x > 0.5, x.dtype)
          return m * x + (1 - m) * K.stop_gradient(x)

        def round_through(x):
          return x + K.stop_gradient(K.round(x) - x)

        def build(base):
          x = Lambda(gate)(base.output)
          x = Lambda(round_through)(x)
          model = Model(base.input, Dense(3)(x))
          model.compile("adam", "mse")
          return model
        """,
    # The best weights kept and restored whole by a method called once
    # training is over.
    "the best weights restored by a method after fit": """\
        class Trainer:
          def remember(self):
            self.best = self.model.get_weights()

          def restore(self):
            self.model.set_weights(self.best)

          def run(self, x, y):
            self.model.fit(x, y, epochs=10, callbacks=[self.keeper])
            self.restore()
        """,
    # Sequences shifted right with a zero (or start) step, on a time axis;
    # a zero row put before a whole variable: nothing of it is left out.
    "a zero step or row joined to activations or a whole table": """\
        emb = tf.get_variable("emb", [1000, 64])
        table = tf.concat([tf.zeros([1, 64]), emb], 0)
        x = tf.nn.embedding_lookup(table, ids)
        shifted = tf.concat([tf.zeros([batch, 1, 64]), x[:, :-1]], 1)
        starts = tf.concat((tf.zeros_like(y[:1]), y[1:]), 0)
        loss = build(shifted, starts)
        train_op = tf.train.AdamOptimizer().minimize(loss)
        """,
    # A factory's nested constraint that projects the weight on a box or
    # on non-negative values, chosen from its own values each time.
    "a constraint factory's nested projection": """\
        def non_negative(limit):
          def constraint(w):
            w = w * tf.cast(tf.greater_equal(w, 0.0), w.dtype)
            return tf.clip_by_value(w, 0.0, limit)
          return constraint

        def clipped(limit):
          def constraint(w):
            return tf.where(w > limit, limit * tf.ones_like(w), w)
          return constraint

        def positive():
          def constraint(w):
            keep = w > 0
            return tf.where(keep, w, tf.zeros_like(w))
          return constraint

        class Dense(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.w = self.add_weight("w", [4, 4],
                                     constraint=non_negative(self.limit))
            self.v = self.add_weight("v", [4, 4], constraint=clipped(3.0))
            self.u = self.add_weight("u", [4, 4], constraint=positive())
        """,
    "a kernel mixed under a mask with a second trainable kernel": """\
        class TwoPart(Dense):
          def build(self, input_shape):
            super().build(input_shape)
            self._underlying_kernel = self.kernel
            self.other = self.add_weight("other", shape=self.kernel.shape)
            self.kernel_mask = K.variable(value=self.mask_weight)
            self.kernel_mask_rev = K.variable(value=1 - self.mask_weight)
            self._non_trainable_weights.append(self.kernel_mask)
            self._non_trainable_weights.append(self.kernel_mask_rev)
            self.kernel = (self._underlying_kernel * self.kernel_mask
                           + self.kernel_mask_rev * self.other)
        """,
    "a pruning round rewinding to initial weights kept by the object": """\
        class Pruned:
          def __init__(self, model):
            self.model = model
            self.initial = self.get_weights()

          def get_weights(self):
            weights = {}
            for idx, layer in enumerate(self.model.layers):
              weights[idx] = layer.get_weights()[0]
            return weights

          def mask_weights(self, mask, weights):
            new_weights = list()
            for idx, layer in enumerate(self.model.layers):
              new_weights.append(weights[idx] * mask[idx])
              new_weights.append(layer.get_weights()[1])
            return new_weights

          def prune_round(self, x, y, mask):
            self.model.set_weights(self.mask_weights(mask, self.initial))
            self.model.fit(x, y, epochs=5)
            return self.get_weights()
        """,
    "chosen gradient rows set to non-zero values from a literal list": """\
        def train(x_points, n, optimizer, loss_fn):
          with tf.GradientTape() as tape:
            loss_value = loss_fn(x_points)
          gradients = tape.gradient(loss_value, [x_points])
          gradients[0] = tf.tensor_scatter_nd_update(
              gradients[0], [[0], [n - 1]], [0.0, 1.0])
          optimizer.apply_gradients(zip(gradients, [x_points]))
        """,
    # Deep compression's quantization: each weight set to its cluster's
    # centroid (values built from the centroids, not its own), then the
    # pruning mask; and the centroids' shared gradient.
    "weights set to their cluster's centroid through feed_dict": """\
        class Layer(object):
          def __init__(self, d):
            self.w = tf.Variable(tf.random.normal([d, d]))
            self.w_PH = tf.placeholder(tf.float32, self.w.shape)
            self.assign_w = tf.assign(self.w, self.w_PH)

          def quantize_weights_update(self, sess):
            w_data_updated = np.zeros(self.w.shape, dtype=np.float32)
            for i in range(self.n_clusters):
              cluster_mask = self.clusters_masks[i]
              w_data_updated = w_data_updated + cluster_mask * self.centroids[i]
            sess.run(self.assign_w, feed_dict={
                self.w_PH: self.pruning_mask_data * w_data_updated})

        LAYERS = [Layer(3), Layer(4)]
        train_step = opt.minimize(loss)
        with tf.Session() as sess:
          for i in range(1000):
            sess.run(train_step, feed_dict={x_PH: batch_x})
            for L in LAYERS:
              L.quantize_weights_update(sess)
        """,
    "pretrained rows blended into a table once, before training": """\
        def load_pretrained(model, pretrained, known):
          table = model.embedding.embeddings
          table.assign((1 - known) * table + known * pretrained)

        def main(model, data):
          load_pretrained(model, np.load("vectors.npy"), np.load("known.npy"))
          model.fit(data, epochs=3)
        """,
    "a variable joined to constant features along the last axis": """\
        def features(x, dim):
          learned = tf.get_variable("learned", shape=(10, dim))
          fixed = tf.constant(np.load("features.npy"))
          table = tf.concat([learned, fixed], axis=1)
          return tf.nn.embedding_lookup(table, x)
        """,
    # A vector quantizer: dead codes replaced by samples of the inputs,
    # the live ones kept (a reset with data, nothing held).
    "dead codebook entries replaced by input samples": """\
        class VectorQuantizer(keras.layers.Layer):
          def build(self, input_shape):
            self.embeddings = self.add_weight(shape=(self.k, self.d))

          def revive(self, flat_inputs):
            dead_mask = keras.ops.cast(self.unused > self.patience, "float32")
            rand_idx = keras.ops.cast(
                keras.random.uniform((self.k,)) * self.n, "int32")
            replacements = keras.ops.take(flat_inputs, rand_idx, axis=0)
            dead_mask_exp = keras.ops.expand_dims(dead_mask, axis=-1)
            new_codebook = (dead_mask_exp * replacements
                            + (1.0 - dead_mask_exp) * self.embeddings)
            self.embeddings.assign(new_codebook)

          def call(self, inputs, training=False):
            if training:
              self.revive(inputs)
            return inputs
        """,
    # Lottery tickets: after training, each pruning round evaluates the
    # trained (then the starting) weights with a new mask; nothing trains
    # in that loop.
    "weights set back in a loop that only evaluates, after training": """\
        def main(model, mnist, pruner, epochs):
          starting_weights = model.get_weights()
          mnist.fit(model, epochs)
          trained_weights = model.get_weights()
          for i in range(4):
            model.set_weights(trained_weights)
            pruner.calc_prune_mask(model, 0.2)
            model.set_weights(starting_weights)
            pruner.apply_pruning(model)
            losses[i] = mnist.evaluate(model)
        """,
    # ISS-RNNs: weights below a threshold zeroed after each step, the
    # condition made from their own magnitude (pruned anew each time).
    "weights below a threshold zeroed by tf.where each step": """\
        def build(loss, threshold):
          train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
          with tf.control_dependencies([train_op]):
            for train_var in tf.trainable_variables():
              where_cond = tf.less(tf.abs(train_var), threshold)
              train_var = tf.assign(train_var, tf.where(
                  where_cond, tf.zeros(tf.shape(train_var)), train_var))
          return train_op
        """,
    # RETAIN's evaluation script: the training script's constraint class
    # copied only so that `load_model` can read the saved model.
    "a constraint class defined only to load a saved model": """\
        class FreezePadding(Constraint):
          def __call__(self, w):
            other_weights = K.cast(K.ones(K.shape(w))[:-1], K.floatx())
            last_weight = K.cast(K.equal(K.reshape(w[-1, :], (1, K.shape(w)[1])),
                                         0.), K.floatx())
            appended = K.concatenate([other_weights, last_weight], axis=0)
            w *= appended
            return w

        def import_model(path):
          model = load_model(path, custom_objects={'FreezePadding': FreezePadding})
          return model
        """,
    # PackNet: after a task, the weights below a magnitude threshold
    # pruned (the mask made from the weights themselves); for a test, a
    # view of the earlier tasks' weights (restored when the test ends).
    "weights pruned by their magnitude, and a view kept for a test": """\
        class PackNet(SAC):
          def on_test_begin(self, logs=None):
            self._set_view(self.task)

          def on_test_end(self, logs=None):
            for v, saved in zip(self.weights, self.saved):
              v.assign(saved)

          def on_task_end(self, task):
            self._prune(0.5, task)

          def _prune(self, prune_perc, seq_idx):
            for v, owner in zip(self.weights, self.owners):
              threshold = np.percentile(np.abs(v.numpy()), prune_perc * 100)
              keep_mask = (tf.abs(v) > threshold) | (owner != seq_idx)
              v.assign(v * tf.cast(keep_mask, tf.float32))

          def _set_view(self, seq_idx):
            for v, owner, saved in zip(self.weights, self.owners, self.saved):
              saved.assign(v)
              v.assign(v * tf.cast(owner <= seq_idx, tf.float32))
        """,
    "masked gradients handed to a function that only logs them": """\
        def log_masked(log_func, grads_and_vars):
          mask = tf.get_collection("mask")[0]
          return log_func([g * mask for g, v in grads_and_vars])

        def train(loss, writer):
          optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
          grads_and_vars = optimizer.compute_gradients(loss)
          log_masked(writer.add_summary, grads_and_vars)
          return optimizer.apply_gradients(grads_and_vars)
        """,
    # YellowFin: the optimizer's curvature window, a non-trainable
    # variable, written one slot per step beside the train op.
    "an optimizer's window written by scatter_update each step": """\
        class YFOptimizer(object):
          def __init__(self, width):
            self._width = width
            self._global_step = tf.Variable(0, trainable=False)

          def curvature_range(self):
            self._curv_win = tf.Variable(np.zeros([self._width, ]),
                                         dtype=tf.float32, trainable=False)
            self._curv_win = tf.scatter_update(
                self._curv_win, self._global_step % self._width,
                self._grad_norm_squared)
            return [tf.reduce_max(self._curv_win)]

          def after_apply(self):
            after_apply_ops = []
            self._grad_norm_squared = tf.add_n(self._grad_norm_squared)
            curv_range_ops = self.curvature_range()
            after_apply_ops += curv_range_ops
            return tf.group(*after_apply_ops)

          def apply_gradients(self, grads_tvars):
            apply_grad_op = self._optimizer.apply_gradients(grads_tvars)
            after_apply_op = self.after_apply()
            return tf.group(apply_grad_op, after_apply_op)

        def main(loss, sess):
          opt = YFOptimizer(20)
          apply_op = opt.apply_gradients(opt.compute_gradients(loss))
          for i in range(100):
            res = sess.run([opt._curv_win, apply_op])
        """,
    "a mask object made from the weights it prunes, once": """\
        class Masker:
          def mask(self, w_f):
            self.mask_ = np.abs(w_f) > np.percentile(np.abs(w_f), self.p)

          def apply(self, w):
            return np.multiply(w, self.mask_)

        class Ticket:
          def prune(self, pruner, p):
            for layer in self.model.layers:
              W = layer.get_weights()[0]
              masker = pruner(p)
              masker.mask(w_f=W)
              layer.set_weights([masker.apply(W)])
            self.model.fit(x, y)
        """,
    "a mask object pruning by magnitude each time": """\
        class Masker:
          def apply(self, w):
            return np.where(np.abs(w) > self.threshold, w, 0.0)

        class PruneCallback(keras.callbacks.Callback):
          def on_batch_end(self, batch, logs=None):
            for l, mask in zip(self.model.layers, self.masks):
              l.set_weights([mask.apply(l.get_weights()[0])])
        """,
    # A TF1 char-CNN: the op zeroing the padding row is built and kept,
    # but no `run` ever fetches it.
    "a padding row's zeroing op built and never run": """\
        def inference_graph(char_vocab_size, char_embed_size, input_):
          with tf.variable_scope('Embedding'):
            char_embedding = tf.get_variable(
                'char_embedding', [char_vocab_size, char_embed_size])
            clear_padding = tf.scatter_update(
                char_embedding, [0], tf.constant(0.0, shape=[1, char_embed_size]))
            embedded = tf.nn.embedding_lookup(char_embedding, input_)
          return dict(clear_padding=clear_padding, embedded=embedded)

        def main():
          with tf.Session() as session:
            model = inference_graph(100, 15, x)
            train_op = tf.train.AdamOptimizer().minimize(loss(model))
            for batch in batches:
              session.run(train_op, {x: batch})
        """,
    # A quantizer: its input blended with the quantized input by a
    # non-trainable noise factor (a variable nothing trains).
    "a quantizer's noise factor, a non-trainable variable": """\
        class QuantizedRelu(object):
          def build(self):
            self.qnoise_factor = tf.Variable(1.0, trainable=False)

          def __call__(self, x):
            x_u = tf.where(x <= self.upper, tf.nn.relu(x),
                           tf.ones_like(x) * self.upper)
            xq = tf.round(x_u * self.m) / self.m
            xq = tf.where(xq <= self.upper, xq, tf.ones_like(xq) * self.upper)
            return (1 - self.qnoise_factor) * x_u + tf.stop_gradient(
                self.qnoise_factor * xq)
        """,
    # Activations whose non-finite entries get no gradient.
    "activations masked where they are finite": """\
        class Loss(tf.keras.layers.Layer):
          def crop(self, x):
            mask = tf.cast(tf.is_finite(x), tf.float32)
            x = tf.where(tf.is_finite(x), x, tf.zeros_like(x))
            return (1 - mask) * tf.stop_gradient(x) + mask * x
        """,
    "padding positions of a layer's own output kept from the gradient": """\
        class Encoder(tf.keras.layers.Layer):
          def call(self, inputs):
            h = self.dense(inputs)
            mask = tf.sequence_mask(self.lengths, dtype=h.dtype)
            return mask * h + (1 - mask) * tf.stop_gradient(h)
        """,
    "the variables of the scope the model is built in": """\
        class Trainer(object):
          def build(self, loss_op, optimizer):
            grads_and_vars = optimizer.compute_gradients(
                loss_op,
                tf.trainable_variables(scope=tf.get_default_graph().get_name_scope()))
            return optimizer.apply_gradients(grads_and_vars)
        """,
    "weights restored once after a constrained training call": """\
        def evaluate_constrained(model, data, labels, constraints):
          weights_copy = copy_model_weights(model.get_weights())
          model = satisfy_weights(model, data, labels, weights=weights_copy,
                                  constraints=constraints)
          logits = model(data, training=False)
          model.set_weights(weights_copy)
          return logits

        def satisfy_weights(model, data, labels, weights, constraints):
          for _ in range(10):
            with tf.GradientTape() as tape:
              loss = constraints(model(data), labels)
            grads = tape.gradient(loss, model.trainable_weights)
            model.optimizer.apply_gradients(zip(grads, model.trainable_weights))
          return model
        """,
    "an optimizer's update scaled by a trust ratio": """\
        class Lamb(tf.train.Optimizer):
          def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            assignments = []
            for (grad, param) in grads_and_vars:
              update = grad / (tf.norm(grad) + 1e-6)
              w_norm, g_norm = tf.norm(param), tf.norm(update)
              ratio = tf.where(w_norm > 0, tf.where(g_norm > 0, w_norm / g_norm,
                                                    1.0), 1.0)
              update *= ratio
              assignments.append(param.assign(param - self.lr * update))
            return tf.group(*assignments, name=name)
        """,
    "K.batch_set_value pruning by magnitude": """\
        class Pruner(keras.callbacks.Callback):
          def on_epoch_end(self, epoch, logs=None):
            weights = self.model.trainable_weights
            K.batch_set_value([(w, K.get_value(w) * (abs(K.get_value(w)) > t))
                               for w in weights])
        """,
    "a hand-written update skipping missing gradients": """\
        def train_step(model, x, y, lr):
          with tf.GradientTape() as tape:
            loss = model(x, y)
          grads = tape.gradient(loss, model.trainable_variables)
          for g, v in zip(grads, model.trainable_variables):
            if g is None:
              continue
            v.assign_sub(lr * g)
        """,
    # tensor2tensor's PPO: the policy network's variables, by its name.
    "a configured scope naming the whole policy network": """\
        def define_ppo_step(data_points, hparams, action_space, lr):
          loss = sum(losses(data_points, hparams))
          variables = tf.global_variables(hparams.policy_network + "/.*")
          return optimize.optimize(loss, lr, hparams, variables=variables)

        def optimize(loss, learning_rate, hparams, variables=None):
          return tf.contrib.layers.optimize_loss(
              loss, tf.train.get_or_create_global_step(), learning_rate,
              "Adam", variables=variables)
        """,
    "zeros appended where a gradient is missing": """\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          grads = tape.gradient(loss, model.trainable_variables)
          fixed = []
          for g, v in zip(grads, model.trainable_variables):
            if g is None:
              fixed.append(tf.zeros_like(v))
            else:
              fixed.append(g)
          opt.apply_gradients(zip(fixed, model.trainable_variables))
        """,
    "a zero row joined to a variable (padding)": """\
        emb = tf.Variable(tf.random.normal([1000, 64]))
        table = tf.concat([tf.zeros([1, 64]), emb], axis=0)
        out = tf.nn.embedding_lookup(table, ids)
        """,
    "gradients read in a session for a summary": """\
        grads = tf.gradients(loss, params)
        train_op = opt.apply_gradients(zip(grads, params))
        with tf.Session() as sess:
          for step in range(100):
            g = sess.run(grads)
            norms = [np.linalg.norm(x * mask) for x in g]
            sess.run(train_op, feed_dict={lr: 0.1 * step})
        """,
    # gpt-2: the model is built under `scope='model'`, a default.
    "the model's scope given as a parameter's default": """\
        def model(hparams, X, scope='model', reuse=False):
          with tf.variable_scope(scope, reuse=reuse):
            return dense(X)

        def main():
          output = model(hparams, context)
          loss = tf.reduce_mean(output)
          train_vars = [v for v in tf.trainable_variables() if 'model' in v.name]
          return tf.train.AdamOptimizer().minimize(loss, var_list=train_vars)
        """,
    # GAIL: the adversary trained on the variables of its own scope.
    "an object's variables by the scope it builds them under": """\
        class Adversary(object):
          def __init__(self, hidden, scope="adversary"):
            self.scope = scope
            logits = self.build_graph(obs)
            self.total_loss = tf.reduce_mean(logits)
            var_list = self.get_trainable_variables()
            self.grad = flatgrad(self.total_loss, var_list)

          def build_graph(self, obs):
            with tf.variable_scope(self.scope):
              return tf.layers.dense(obs, 1)

          def get_trainable_variables(self):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     self.scope)

        def flatgrad(loss, var_list):
          grads = tf.gradients(loss, var_list)
          return tf.concat([tf.reshape(g, [-1]) for g in grads], axis=0)
        """,
    "a missing gradient replaced by zeros": """\
        def step(model, opt, x):
          with tf.GradientTape() as tape:
            loss = model(x)
          variables = model.trainable_variables
          grads = tape.gradient(loss, variables)
          grads = [g if g is not None else tf.zeros_like(v)
                   for g, v in zip(grads, variables)]
          opt.apply_gradients(zip(grads, variables))
        """,
    "a gradient kept when it is there": """\
        gvs = opt.compute_gradients(loss)
        gvs = [(g if g else tf.zeros_like(v), v) for g, v in gvs]
        train = opt.apply_gradients(gvs)
        """,
    "gradients flattened with their shapes": """\
        grads = tf.gradients(loss, params)
        flat = tf.concat([tf.reshape(g, [-1]) for g in grads], 0)
        shapes = [tf.shape(g) for g in grads]
        norm = tf.norm(flat)
        scaled = [g * tf.ones(tf.shape(g)) / norm for g in grads]
        train = opt.apply_gradients(zip(scaled, params))
        """,
    "a pair put back in front of the other pairs": """\
        gvs = opt.compute_gradients(loss)
        g, v = gvs[0]
        train = opt.apply_gradients([(tf.clip_by_norm(g, 1.), v)] + gvs[1:])
        """,
    "the trainable ones among all the variables": """\
        def build(features, net, opt):
          loss = tf.reduce_mean(net(features))
          tvars = tf.trainable_variables()
          chosen = [v for v in tf.global_variables() if v in tvars]
          return opt.minimize(loss, var_list=chosen)
        """,
    "a GAN's halves told apart by membership": """\
        def build(gen, disc, z, x, opt):
          fake = gen(z)
          g_loss = -tf.reduce_mean(disc(fake))
          d_loss = tf.reduce_mean(disc(fake)) - tf.reduce_mean(disc(x))
          g_vars = gen.get_variables()
          d_vars = [v for v in tf.trainable_variables() if v not in g_vars]
          return (opt.minimize(g_loss, var_list=g_vars),
                  opt.minimize(d_loss, var_list=d_vars))
        """,
    "an object's variables, all of them, passed to a trainer": """\
        class Model(object):
          def __init__(self, config):
            self.var_list = tf.trainable_variables()

        class Trainer(object):
          def __init__(self, config, model):
            self.opt = tf.train.AdamOptimizer(config.lr)
            self.train_op = self.opt.minimize(model.loss, var_list=model.var_list)

        def main(config):
          trainer = Trainer(config, Model(config))
        """,
    "a Keras layer's _trainable_weights, the module's trainable ones": """\
        class Wrapper(tf.keras.layers.Layer):
          def build(self, input_shape):
            self.module = hub.Module(self.path, trainable=True)
            for var in self.module.variables:
              if var.trainable:
                self._trainable_weights.append(var)
              else:
                self._non_trainable_weights.append(var)
        """,
    "a GAN's halves, each trained through the stacked model": """\
        def train(generator, discriminator, opt_g, opt_d, z, x):
          gan = tf.keras.Sequential([generator, discriminator])
          with tf.GradientTape() as tape:
            g_loss = bce(tf.ones_like(z), gan(z))
          grads = tape.gradient(g_loss, generator.trainable_variables)
          opt_g.apply_gradients(zip(grads, generator.trainable_variables))
          with tf.GradientTape() as tape:
            d_loss = bce(tf.ones_like(z), discriminator(x)) + bce(
                tf.zeros_like(z), gan(z))
          grads = tape.gradient(d_loss, discriminator.trainable_variables)
          opt_d.apply_gradients(zip(grads, discriminator.trainable_variables))
        """,
    "a model trained whole, then stacked after a layer": """\
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        for x, y in data:
          with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
          gradients = tape.gradient(loss, model.trainable_variables)
          optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        final_model = tf.keras.Sequential([norm_layer, model])
        y_pred = final_model(x_new)
        """,
    "a standard collection named by a formatted key": """\
        def model_fn(features, labels, mode, params):
          loss = tf.losses.get_total_loss()
          key = "trainable_variables"
          variables = tf.get_collection("{}".format(key))
          return tf.train.AdamOptimizer().minimize(loss, var_list=variables)
        """,
    "a method of an object passed in, given every variable": """\
        class Ensembler(object):
          def build_train_op(self, ensemble, loss, var_list, labels):
            optimizer = tf.train.AdamOptimizer(0.01)
            return optimizer.minimize(loss=loss, var_list=var_list)

        def build_ensemble_spec(ensembler, features, labels, builder):
          ensemble = builder.build(features)
          loss = tf.reduce_mean(ensemble.logits)
          return ensembler.build_train_op(
              ensemble=ensemble, loss=loss,
              var_list=tf.trainable_variables(), labels=labels)
        """,
    "the variables a function creates, all of them": """\
        def build(x, y):
          w = tf.Variable(tf.zeros([784, 10]))
          b = tf.Variable(tf.zeros([10]))
          step = tf.Variable(0, trainable=False)
          loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
          return tf.train.GradientDescentOptimizer(0.5).minimize(
              loss, global_step=step, var_list=[w, b])
        """,
    "the weights trained beside a step counter and a learning rate": """\
        def build(x, y):
          w = tf.Variable(tf.zeros([784, 10]))
          b = tf.Variable(tf.zeros([10]))
          step = tf.Variable(0, name="global_step")
          lr = tf.Variable(0.1)
          loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
          return tf.train.GradientDescentOptimizer(lr).minimize(
              loss, global_step=step, var_list=[w, b])
        """,
    "a head trained on a base Keras already freezes": """\
        base = tf.keras.applications.MobileNetV2(include_top=False)
        base.trainable = False
        head = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model = tf.keras.Sequential([base, head])
        with tf.GradientTape() as tape:
          loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, head.trainable_variables)
        opt.apply_gradients(zip(grads, head.trainable_variables))
        """,
    "a perturbation trained, the inputs held in assigned variables": """\
        def attack(model, shape):
          modifier = tf.Variable(np.zeros(shape, dtype=np.float32))
          timg = tf.Variable(np.zeros(shape, dtype=np.float32))
          assign_timg = tf.placeholder(tf.float32, shape)
          setup = tf.assign(timg, assign_timg)
          loss = tf.reduce_sum(model.predict(tf.tanh(modifier + timg)))
          return setup, tf.train.AdamOptimizer(0.01).minimize(
              loss, var_list=[modifier])
        """,
    "a GAN's two halves created in one function": """\
        def build(z, x):
          g_w = tf.get_variable("g_w", [100, 784])
          d_w = tf.get_variable("d_w", [784, 1])
          fake = tf.matmul(z, g_w)
          g_loss = -tf.reduce_mean(tf.matmul(fake, d_w))
          d_loss = tf.reduce_mean(tf.matmul(fake, d_w) - tf.matmul(x, d_w))
          opt = tf.train.AdamOptimizer(1e-4)
          return (opt.minimize(g_loss, var_list=[g_w]),
                  opt.minimize(d_loss, var_list=[d_w]))
        """,
    "every layer of the model, by position": """\
        variables = [w for layer in model.layers for w in layer.trainable_weights]
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        """,
    # A book's eager listing: the inputs first made variables, then bound
    # to each batch's constants before every step: data, not weights.
    "inputs first made variables, then each batch's constants": """\
        X = tf.Variable([0])
        Y = tf.Variable([0])
        W = tf.Variable(tf.zeros([4, 3]))
        b = tf.Variable(tf.zeros([3]))
        y_model = lambda: tf.nn.softmax(tf.matmul(X, W) + b)
        cost = lambda: -tf.reduce_sum(Y * tf.math.log(y_model()))
        train_op = tf.keras.optimizers.SGD(learning_rate=0.01)
        for step in range(1000):
          X = tf.constant(xs[step], dtype=tf.float32)
          Y = tf.constant(labels[step], dtype=tf.float32)
          train_op.minimize(cost, [W, b])
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_real_form_is_found_at_its_line(name):
  code, expected = POSITIVE[name]
  assert _found(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_is_not_reported(name):
  assert _found(NEGATIVE[name]) == []
