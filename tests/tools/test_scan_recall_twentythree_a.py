"""Round 23a's recall: a step's list made by leaving one index out of a
model's whole list (`m.trainable_weights[:k] + m.trainable_weights[(k +
1):]`) for warm-up epochs while the loss runs the whole model, found as
`var-list-filter`. Beside it what stays silent: the two halves meeting
again with nothing left out, and an index left out that another step
trains alone."""

import scanned

_MODEL = '''
import tensorflow as tf

class Fixed(tf.keras.layers.Layer):
  def build(self, shape):
    self.z_fixed = tf.Variable(tf.ones([4, shape[-1]]), trainable=True)

  def call(self, x):
    return tf.matmul(tf.nn.softmax(x), self.z_fixed)

def build(hidden):
  inputs = tf.keras.Input([16])
  h = inputs
  for size in hidden:
    h = tf.keras.layers.Dense(size)(h)
  out = Fixed()(h)
  return tf.keras.Model(inputs, out)

def train(data, hidden, warm_up=20, epochs=100):
  model = build(hidden)
  z_fixed_idx = len(hidden) * 2
  optimizer = tf.keras.optimizers.Adam(1e-3)

  @tf.function
  def train_step_warm_up(x):
    with tf.GradientTape() as tape:
      loss_value = tf.reduce_mean((model(x, training=True) - x) ** 2)
      loss_value += sum(model.losses)
    var_list = {chosen}
    grads = tape.gradient(loss_value, var_list)
    optimizer.apply_gradients(zip(grads, var_list))
    return loss_value

  @tf.function
  def train_step(x):
    with tf.GradientTape() as tape:
      loss_value = tf.reduce_mean((model(x, training=True) - x) ** 2)
      loss_value += sum(model.losses)
    grads = tape.gradient(loss_value, {other})
    optimizer.apply_gradients(zip(grads, {other}))
    return loss_value

  for epoch in range(epochs):
    for x in data:
      if epoch < warm_up:
        loss_value = train_step_warm_up(x)
      else:
        loss_value = train_step(x)
'''

_LEFT_OUT = ("model.trainable_weights[:z_fixed_idx] + "
             "model.trainable_weights[(z_fixed_idx+1):]")


def _code(chosen, other="model.trainable_weights"):
  return _MODEL.replace("{chosen}", chosen).replace("{other}", other)


def _line_of(code, text):
  return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def test_one_index_left_out_for_warm_up_is_found():
  code = _code(_LEFT_OUT)
  assert scanned.found(code) == [
      ("var-list-filter", _line_of(code, "var_list = model."))]


def test_halves_that_meet_leave_nothing_out():
  assert scanned.found(_code(
      "model.trainable_weights[:z_fixed_idx] + "
      "model.trainable_weights[z_fixed_idx:]")) == []


def test_an_index_left_out_that_another_step_trains_alone_is_silent():
  assert scanned.found(_code(
      _LEFT_OUT, "[model.trainable_weights[z_fixed_idx]]")) == []


def test_another_model_s_whole_beside_the_cut_is_silent():
  # `critic` is no model the cut list comes from: two models, two halves.
  code = _code(_LEFT_OUT, "critic.trainable_weights").replace(
      "  model = build(hidden)\n",
      "  model = build(hidden)\n  critic = build(hidden)\n")
  assert scanned.found(code) == []


# Doc2vec: one loss over word vectors, document vectors and output
# weights; inference trains the new documents' vectors alone.
_DOC2VEC = '''
import tensorflow as tf

class Doc2Vec(object):
  def __init__(self, size):
    self._size = size
    self._syn0_d = None

  def _build_loss(self, inputs, labels, num_docs):
    syn0_w = tf.get_variable('syn0_w', [1000, self._size])
    syn0_d = tf.get_variable('syn0_d', [num_docs, self._size])
    syn1 = tf.get_variable('syn1', [1000, self._size])
    biases = tf.get_variable('biases', [1000])
    self._syn0_d = syn0_d
    embed = tf.nn.embedding_lookup(syn0_d, inputs[:, 0]) + tf.reduce_mean(
        tf.nn.embedding_lookup(syn0_w, inputs[:, 1:]), axis=1)
    return tf.reduce_mean(tf.nn.sampled_softmax_loss(
        syn1, biases, labels, embed, 5, 1000))

  def _train_fn(self, inputs, labels, num_docs, is_inferring=False):
    loss = self._build_loss(inputs, labels, num_docs)
    optimizer = tf.train.GradientDescentOptimizer(0.025)
    var_list = {chosen}
    grad_update_op = optimizer.minimize(loss, var_list=var_list)
    return grad_update_op

class Trainer(Doc2Vec):
  def train(self, inputs, labels, num_docs):
    return self._train_fn(inputs, labels, num_docs, False)

class Inferencer(Doc2Vec):
  def infer(self, inputs, labels, num_docs):
    return self._train_fn(inputs, labels, num_docs, True)
'''


def test_document_vectors_alone_against_every_variable_are_found():
  code = _DOC2VEC.replace(
      "{chosen}", "[self._syn0_d] if is_inferring else tf.global_variables()")
  assert [idiom for idiom, _ in scanned.found(code)] == ["var-list-filter"]


def test_every_variable_the_class_makes_against_every_one_is_silent():
  code = _DOC2VEC.replace(
      "{chosen}", "[self.w] if is_inferring else tf.global_variables()")
  code = code.replace("    self._syn0_d = None\n",
                      "    self._syn0_d = None\n"
                      "    self.w = tf.Variable(tf.zeros([4]))\n")
  assert scanned.found(code) == []


def test_every_variable_in_both_arms_is_silent():
  code = _DOC2VEC.replace(
      "{chosen}", "tf.trainable_variables() if is_inferring "
      "else tf.global_variables()")
  assert scanned.found(code) == []


# Paragraph vectors: the pairs of one loss over document and word
# tables and softmax weights, kept to the document table's by equality
# when inferring.
_PAIRS = '''
import tensorflow as tf

def run_pvdm(docs, vocab, size, lr, train_path=None):
  X_doc = tf.placeholder(tf.int32, [None])
  X_words = tf.placeholder(tf.int32, [None, 4])
  y = tf.placeholder(tf.int32, [None])
  emb_doc = tf.Variable(tf.random_uniform([len(docs), size]))
  emb_word = tf.Variable(tf.random_uniform([len(vocab), size]))
  hs_W = tf.Variable(tf.random_uniform([len(vocab), size]))
  emb = tf.nn.embedding_lookup(emb_doc, X_doc) + tf.reduce_mean(
      tf.nn.embedding_lookup(emb_word, X_words), 1)
  loss = {loss}
  opt = tf.train.AdamOptimizer(lr)
  grads_and_vars = opt.compute_gradients(loss)
  if train_path:
    # only train document embeddings
    grads_and_vars = [(grad, var) for grad, var in grads_and_vars
                      if {test}]
  train_op = opt.apply_gradients(grads_and_vars)
  with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op)
'''

_SOFTMAX = ("tf.reduce_mean(tf.nn.sampled_softmax_loss(hs_W, "
            "tf.zeros([len(vocab)]), y, emb, 5, len(vocab)))")


def _pairs(test, loss=_SOFTMAX):
  return _PAIRS.replace("{test}", test).replace("{loss}", loss)


def test_pairs_kept_to_the_document_table_by_equality_are_found():
  code = _pairs("var == emb_doc")
  assert scanned.found(code) == [
      ("var-list-filter", _line_of(code, "grads_and_vars = [(grad"))]


def test_pairs_of_both_tables_are_silent():
  # word2vec's two tables, both trained, and the softmax weights unread.
  assert scanned.found(_pairs(
      "var == emb_doc or var == emb_word",
      "tf.reduce_sum(tf.nn.embedding_lookup(emb_doc, X_doc)) + "
      "tf.reduce_sum(tf.nn.embedding_lookup(emb_word, X_words))")) == []


def test_pairs_against_a_placeholder_are_silent():
  assert scanned.found(_pairs("var == y")) == []
